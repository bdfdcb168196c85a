-- Events: every change that customers hear about, written in the transaction that made it.
CREATE TABLE events (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL,
	type TEXT NOT NULL,
	data TEXT NOT NULL,
	created_at {{TS}} NOT NULL
);
CREATE INDEX events_project ON events(project_id, id);
CREATE INDEX events_account_type ON events(account_id, type, id);
