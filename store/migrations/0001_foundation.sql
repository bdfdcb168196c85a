-- Projects, API keys, accounts, users, contacts, API logs, idempotency keys, signing keys.
CREATE TABLE projects (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	locked_at {{TS}},
	created_at {{TS}} NOT NULL
);
CREATE TABLE api_keys (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL REFERENCES projects(id),
	kind TEXT NOT NULL,
	hash TEXT NOT NULL UNIQUE,
	hint TEXT NOT NULL,
	created_at {{TS}} NOT NULL,
	revoked_at {{TS}}
);
CREATE INDEX api_keys_project ON api_keys(project_id, id);
CREATE TABLE accounts (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL REFERENCES projects(id),
	name TEXT NOT NULL,
	brand_name TEXT,
	organization TEXT NOT NULL,
	time_zone TEXT,
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL,
	archived_at {{TS}}
);
CREATE INDEX accounts_project ON accounts(project_id, id);
CREATE TABLE users (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	first_name TEXT NOT NULL,
	last_name TEXT,
	metadata TEXT NOT NULL,
	photo_url TEXT,
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL,
	deleted_at {{TS}}
);
CREATE INDEX users_account ON users(account_id, id);
CREATE TABLE contacts (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	phone_number TEXT NOT NULL,
	email TEXT,
	first_name TEXT,
	last_name TEXT,
	metadata TEXT NOT NULL,
	outbound_disabled BOOLEAN NOT NULL DEFAULT FALSE,
	opted_out BOOLEAN NOT NULL DEFAULT FALSE,
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE UNIQUE INDEX contacts_account_phone ON contacts(account_id, phone_number);
CREATE INDEX contacts_account ON contacts(account_id, id);
CREATE TABLE api_logs (
	id {{SERIAL}},
	project_id TEXT NOT NULL,
	key_id TEXT NOT NULL,
	request_id TEXT NOT NULL,
	method TEXT NOT NULL,
	path TEXT NOT NULL,
	status INTEGER NOT NULL,
	duration_micros BIGINT NOT NULL,
	created_at {{TS}} NOT NULL
);
CREATE INDEX api_logs_project ON api_logs(project_id, id);
CREATE TABLE idempotency_keys (
	project_id TEXT NOT NULL,
	key TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	status INTEGER NOT NULL,
	body {{BLOB}},
	content_type TEXT NOT NULL DEFAULT '',
	created_at {{TS}} NOT NULL,
	PRIMARY KEY (project_id, key)
);
CREATE TABLE signing_keys (
	id TEXT PRIMARY KEY,
	seed {{BLOB}} NOT NULL,
	created_at {{TS}} NOT NULL
);
