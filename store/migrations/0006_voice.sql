-- Voice: calls to the accounts' numbers, their recordings (the audio kept in the database, so
-- every instance serves it) and the voicemails among those recordings.
CREATE TABLE calls (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	phone_number_id TEXT NOT NULL REFERENCES phone_numbers(id),
	contact_id TEXT NOT NULL REFERENCES contacts(id),
	carrier TEXT NOT NULL,
	carrier_id TEXT NOT NULL,
	from_number TEXT NOT NULL,
	to_number TEXT NOT NULL,
	status TEXT NOT NULL,
	duration INTEGER NOT NULL,
	recording_url TEXT,
	initiated_at {{TS}} NOT NULL,
	ended_at {{TS}},
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE UNIQUE INDEX calls_carrier_id ON calls(carrier, carrier_id);
CREATE INDEX calls_account ON calls(account_id, id);
CREATE TABLE recordings (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL,
	call_id TEXT NOT NULL REFERENCES calls(id),
	duration INTEGER NOT NULL,
	content_type TEXT NOT NULL,
	size BIGINT NOT NULL,
	data {{BLOB}} NOT NULL,
	created_at {{TS}} NOT NULL
);
CREATE INDEX recordings_account ON recordings(account_id, id);
CREATE TABLE voicemails (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL,
	call_id TEXT NOT NULL REFERENCES calls(id),
	recording_id TEXT NOT NULL REFERENCES recordings(id),
	duration INTEGER NOT NULL,
	created_at {{TS}} NOT NULL
);
CREATE INDEX voicemails_account ON voicemails(account_id, id);
CREATE UNIQUE INDEX voicemails_recording ON voicemails(recording_id);
