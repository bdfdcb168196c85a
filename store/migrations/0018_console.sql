-- The operator console: dashboard users (people who sign in to the console, distinct from the
-- API's users), their roles per project, their server-side sessions, and the audit log of every
-- change an operator makes, from the console or the command line. The API log gains what a
-- request's detail shows, and an index for its filter by key (and a key's last use).
CREATE TABLE console_users (
	id TEXT PRIMARY KEY,
	-- Lowercased; unique.
	email TEXT NOT NULL,
	-- argon2id in the PHC string format ($argon2id$v=19$m=…,t=…,p=…$salt$hash).
	password_hash TEXT NOT NULL,
	-- A one-time password set by another operator or the command line: the first sign-in must
	-- change it before doing anything else.
	password_one_time BOOLEAN NOT NULL DEFAULT FALSE,
	-- The TOTP secret, sealed with AES-GCM under an installation secret; enabled once confirmed.
	totp_secret {{BLOB}},
	totp_enabled_at {{TS}},
	-- The last accepted TOTP time step: a code is accepted once.
	totp_last_step BIGINT NOT NULL DEFAULT 0,
	-- Consecutive failed sign-ins, and the lockout they caused.
	failed_logins INTEGER NOT NULL DEFAULT 0,
	locked_until {{TS}},
	last_login_at {{TS}},
	disabled_at {{TS}},
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE UNIQUE INDEX console_users_email ON console_users(email);
CREATE TABLE console_members (
	project_id TEXT NOT NULL REFERENCES projects(id),
	user_id TEXT NOT NULL REFERENCES console_users(id),
	-- owner, developer or viewer.
	role TEXT NOT NULL,
	created_at {{TS}} NOT NULL,
	PRIMARY KEY (project_id, user_id)
);
CREATE INDEX console_members_user ON console_members(user_id);
CREATE TABLE console_sessions (
	id TEXT PRIMARY KEY,
	-- SHA-256 of the cookie's secret; the secret itself is never stored.
	token_hash TEXT NOT NULL,
	user_id TEXT NOT NULL REFERENCES console_users(id),
	ip TEXT NOT NULL,
	user_agent TEXT NOT NULL,
	created_at {{TS}} NOT NULL,
	last_seen_at {{TS}} NOT NULL,
	expires_at {{TS}} NOT NULL,
	revoked_at {{TS}}
);
CREATE UNIQUE INDEX console_sessions_token ON console_sessions(token_hash);
CREATE INDEX console_sessions_user ON console_sessions(user_id, id);
CREATE TABLE console_audit (
	id TEXT PRIMARY KEY,
	-- The project changed; empty for changes to the operator's own user (password, TOTP).
	project_id TEXT NOT NULL,
	-- Who: a console user (id and email), or the command line (empty id, email "cli:<os user>").
	actor_id TEXT NOT NULL,
	actor_email TEXT NOT NULL,
	-- What: a verb such as api_key.create, and the id of what it acted on.
	action TEXT NOT NULL,
	target TEXT NOT NULL,
	-- A JSON object of particulars (never a secret).
	detail TEXT NOT NULL,
	-- From where: console or cli, with the client's address and user agent.
	via TEXT NOT NULL,
	ip TEXT NOT NULL,
	user_agent TEXT NOT NULL,
	created_at {{TS}} NOT NULL
);
CREATE INDEX console_audit_project ON console_audit(project_id, id);
CREATE INDEX console_audit_actor ON console_audit(actor_id, id);
ALTER TABLE api_logs ADD COLUMN query TEXT NOT NULL DEFAULT '';
ALTER TABLE api_logs ADD COLUMN ip TEXT NOT NULL DEFAULT '';
ALTER TABLE api_logs ADD COLUMN user_agent TEXT NOT NULL DEFAULT '';
ALTER TABLE api_logs ADD COLUMN error_type TEXT NOT NULL DEFAULT '';
CREATE INDEX api_logs_key ON api_logs(project_id, key_id, id);
