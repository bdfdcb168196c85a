-- A verification started without an account (POST /verifications, which Surge SDKs before the
-- account-scoped path call) belongs to its project only: account_id becomes nullable. Both
-- dialects rebuild the table, the one way SQLite drops a NOT NULL.
CREATE TABLE verifications_next (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT REFERENCES accounts(id),
	phone_number TEXT NOT NULL,
	-- HMAC-SHA256 of the id and the code under an installation secret; the code itself is never stored.
	code_hash {{BLOB}} NOT NULL,
	status TEXT NOT NULL,
	attempt_count INTEGER NOT NULL DEFAULT 0,
	created_at {{TS}} NOT NULL,
	expires_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL
);
INSERT INTO verifications_next (id, project_id, account_id, phone_number, code_hash, status, attempt_count, created_at, expires_at, updated_at)
	SELECT id, project_id, account_id, phone_number, code_hash, status, attempt_count, created_at, expires_at, updated_at FROM verifications;
DROP TABLE verifications;
ALTER TABLE verifications_next RENAME TO verifications;
CREATE INDEX verifications_account ON verifications(account_id, id);
