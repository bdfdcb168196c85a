-- Webhooks: the endpoints operators configure per project, one delivery per event and endpoint
-- (each a series of attempts run as jobs), and the shortened links of messages.
CREATE TABLE webhook_endpoints (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL REFERENCES projects(id),
	url TEXT NOT NULL,
	events TEXT NOT NULL,
	secret TEXT NOT NULL,
	previous_secret TEXT,
	previous_secret_until {{TS}},
	enabled BOOLEAN NOT NULL,
	disabled_reason TEXT,
	failing_since {{TS}},
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE INDEX webhook_endpoints_project ON webhook_endpoints(project_id, id);
CREATE TABLE webhook_deliveries (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id),
	event_id TEXT NOT NULL REFERENCES events(id),
	event_type TEXT NOT NULL,
	status TEXT NOT NULL,
	attempts INTEGER NOT NULL,
	last_status INTEGER,
	last_error TEXT,
	next_attempt_at {{TS}},
	delivered_at {{TS}},
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE INDEX webhook_deliveries_project ON webhook_deliveries(project_id, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
CREATE TABLE links (
	id TEXT PRIMARY KEY,
	code TEXT NOT NULL,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL,
	message_id TEXT NOT NULL,
	url TEXT NOT NULL,
	clicks INTEGER NOT NULL DEFAULT 0,
	last_clicked_at {{TS}},
	created_at {{TS}} NOT NULL
);
CREATE UNIQUE INDEX links_code ON links(code);
CREATE INDEX links_message ON links(message_id);
