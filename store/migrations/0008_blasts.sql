-- Audiences, blasts and phone verifications.
CREATE TABLE audiences (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	name TEXT NOT NULL,
	created_at {{TS}} NOT NULL
);
CREATE INDEX audiences_account ON audiences(account_id, id);
-- One row per member; id (a TypeID minted when the contact was added) orders the members most
-- recently added first and is the list's cursor.
CREATE TABLE audience_contacts (
	audience_id TEXT NOT NULL REFERENCES audiences(id),
	contact_id TEXT NOT NULL REFERENCES contacts(id),
	id TEXT NOT NULL,
	added_at {{TS}} NOT NULL,
	PRIMARY KEY (audience_id, contact_id)
);
CREATE UNIQUE INDEX audience_contacts_order ON audience_contacts(audience_id, id);
-- A blast keeps its `to` list as given (targets, JSON); audiences in it are expanded when the
-- blast is sent. recipients, fanned_out and skipped are counters its jobs maintain.
CREATE TABLE blasts (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	phone_number_id TEXT NOT NULL REFERENCES phone_numbers(id),
	name TEXT,
	body TEXT,
	attachments TEXT NOT NULL,
	link_shortening BOOLEAN NOT NULL DEFAULT FALSE,
	targets TEXT NOT NULL,
	status TEXT NOT NULL,
	send_at {{TS}} NOT NULL,
	recipients INTEGER NOT NULL DEFAULT 0,
	fanned_out INTEGER NOT NULL DEFAULT 0,
	skipped INTEGER NOT NULL DEFAULT 0,
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE INDEX blasts_account ON blasts(account_id, id);
-- Each distinct recipient of a blast, claimed once: the primary key is what makes a re-run of a
-- fan-out batch (after a crash) neither skip nor duplicate anyone. skip_reason is set for a
-- recipient that got no message (opted_out, outbound_disabled, blocked).
CREATE TABLE blast_recipients (
	blast_id TEXT NOT NULL REFERENCES blasts(id),
	phone_number TEXT NOT NULL,
	contact_id TEXT NOT NULL,
	message_id TEXT,
	skip_reason TEXT,
	PRIMARY KEY (blast_id, phone_number)
);
-- Progress counts of a blast: one aggregate over its messages by status.
CREATE INDEX messages_blast ON messages(blast_id, status) WHERE blast_id IS NOT NULL;
CREATE TABLE verifications (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	phone_number TEXT NOT NULL,
	-- HMAC-SHA256 of the id and the code under an installation secret; the code itself is never stored.
	code_hash {{BLOB}} NOT NULL,
	status TEXT NOT NULL,
	attempt_count INTEGER NOT NULL DEFAULT 0,
	created_at {{TS}} NOT NULL,
	expires_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE INDEX verifications_account ON verifications(account_id, id);
