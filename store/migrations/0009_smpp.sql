-- The SMPP adapter's state (carriers/smpp): every submission by our reference with the SMSC
-- message id of each of its parts, so that a delivery receipt resolves to its message after a
-- restart, a resubmission sends only the parts never accepted, and a long message is reported
-- once every part's fate is known; and the parts of concatenated inbound (MO) messages until the
-- last one arrives.
CREATE TABLE smpp_submissions (
	reference TEXT PRIMARY KEY,
	concat_ref INTEGER NOT NULL,
	parts INTEGER NOT NULL,
	reported_at {{TS}},
	created_at {{TS}} NOT NULL
);
CREATE TABLE smpp_parts (
	reference TEXT NOT NULL REFERENCES smpp_submissions(reference),
	part INTEGER NOT NULL,
	smsc_id TEXT,
	status TEXT NOT NULL,
	failure_reason TEXT,
	done_at {{TS}},
	PRIMARY KEY (reference, part)
);
CREATE INDEX smpp_parts_smsc_id ON smpp_parts(smsc_id);
CREATE TABLE smpp_inbound_parts (
	source TEXT NOT NULL,
	destination TEXT NOT NULL,
	concat_ref INTEGER NOT NULL,
	total INTEGER NOT NULL,
	part INTEGER NOT NULL,
	body TEXT NOT NULL,
	created_at {{TS}} NOT NULL,
	PRIMARY KEY (source, destination, concat_ref, total, part)
);
CREATE INDEX smpp_inbound_parts_created ON smpp_inbound_parts(created_at);
