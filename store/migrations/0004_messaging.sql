-- Messaging: conversations, messages and their attachments, numbers blocked after hard failures,
-- per-sender pacing, demo usage, installation secrets and the simulated carrier's outbox.
CREATE TABLE conversations (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	phone_number_id TEXT NOT NULL REFERENCES phone_numbers(id),
	contact_id TEXT NOT NULL REFERENCES contacts(id),
	created_at {{TS}} NOT NULL
);
CREATE UNIQUE INDEX conversations_pair ON conversations(phone_number_id, contact_id);
CREATE INDEX conversations_account ON conversations(account_id, id);
CREATE TABLE messages (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL,
	-- No foreign key: the check would lock the conversation's row (FOR KEY SHARE) on every send,
	-- and the store only writes messages with the conversation it just found or created.
	conversation_id TEXT NOT NULL,
	phone_number_id TEXT NOT NULL,
	sender_type TEXT NOT NULL,
	contact_id TEXT NOT NULL,
	direction TEXT NOT NULL,
	status TEXT NOT NULL,
	body TEXT,
	metadata TEXT NOT NULL,
	encoding TEXT NOT NULL,
	segments INTEGER NOT NULL,
	type TEXT NOT NULL,
	from_number TEXT NOT NULL,
	to_number TEXT NOT NULL,
	carrier TEXT NOT NULL,
	carrier_id TEXT,
	blast_id TEXT,
	auto_reply BOOLEAN NOT NULL DEFAULT FALSE,
	failure_reason TEXT,
	not_before {{TS}},
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL,
	send_at {{TS}},
	sent_at {{TS}},
	delivered_at {{TS}},
	failed_at {{TS}},
	received_at {{TS}}
);
CREATE INDEX messages_account ON messages(account_id, id);
CREATE INDEX messages_conversation ON messages(conversation_id, id);
CREATE UNIQUE INDEX messages_inbound_carrier_id ON messages(carrier, carrier_id) WHERE direction = 'inbound';
CREATE INDEX messages_demo_reply ON messages(phone_number_id, to_number, id);
-- The messages of a sender that wait for dispatch (a dispatch takes a batch of them).
CREATE INDEX messages_queued ON messages(phone_number_id, id) WHERE status = 'queued';
CREATE TABLE attachments (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	message_id TEXT NOT NULL REFERENCES messages(id),
	position INTEGER NOT NULL,
	url TEXT NOT NULL,
	type TEXT NOT NULL,
	content_type TEXT,
	size BIGINT,
	data {{BLOB}},
	fetched_at {{TS}}
);
CREATE INDEX attachments_message ON attachments(message_id, position);
CREATE TABLE blocked_numbers (
	account_id TEXT NOT NULL,
	phone_number TEXT NOT NULL,
	reason TEXT NOT NULL,
	blocked_at {{TS}} NOT NULL,
	retry_after {{TS}} NOT NULL,
	PRIMARY KEY (account_id, phone_number)
);
CREATE TABLE sender_pacing (
	phone_number_id TEXT PRIMARY KEY,
	next_slot_us BIGINT NOT NULL
);
CREATE TABLE demo_usage (
	account_id TEXT PRIMARY KEY,
	sent INTEGER NOT NULL
);
CREATE TABLE installation_secrets (
	name TEXT PRIMARY KEY,
	secret {{BLOB}} NOT NULL,
	created_at {{TS}} NOT NULL
);
CREATE TABLE sim_outbox (
	reference TEXT PRIMARY KEY,
	carrier_id TEXT NOT NULL UNIQUE,
	from_number TEXT NOT NULL,
	to_number TEXT NOT NULL,
	body TEXT NOT NULL,
	parts INTEGER NOT NULL,
	encoding TEXT NOT NULL,
	media TEXT NOT NULL,
	outcome TEXT NOT NULL,
	created_at {{TS}} NOT NULL
);
CREATE INDEX sim_outbox_to ON sim_outbox(to_number, created_at);
