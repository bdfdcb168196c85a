-- Embeddable components: each user's read state per conversation, the deprecated publishable
-- tokens, the origins each project lets frame the components, and (PostgreSQL) the notification
-- that wakes the live streams of an account someone is watching.
CREATE TABLE conversation_reads (
	user_id TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	account_id TEXT NOT NULL,
	-- The newest message of the conversation the user has seen: inbound messages after it are unread.
	last_read_message_id TEXT NOT NULL,
	read_at {{TS}} NOT NULL,
	PRIMARY KEY (user_id, conversation_id)
);
CREATE INDEX conversation_reads_user_time ON conversation_reads(user_id, read_at);
CREATE TABLE publishable_tokens (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL REFERENCES projects(id),
	account_id TEXT NOT NULL REFERENCES accounts(id),
	hash TEXT NOT NULL UNIQUE,
	hint TEXT NOT NULL,
	created_at {{TS}} NOT NULL,
	revoked_at {{TS}}
);
CREATE INDEX publishable_tokens_account ON publishable_tokens(account_id, id);
CREATE TABLE embed_origins (
	project_id TEXT NOT NULL REFERENCES projects(id),
	origin TEXT NOT NULL,
	created_at {{TS}} NOT NULL,
	PRIMARY KEY (project_id, origin)
);
-- A conversation's calls are those of its number and contact.
CREATE INDEX calls_pair ON calls(phone_number_id, contact_id, id);
-- Accounts whose live streams an instance serves, until when: events of other accounts notify nobody.
CREATE TABLE embed_watches (
	account_id TEXT PRIMARY KEY,
	until {{TS}} NOT NULL
);
-- dialect: postgres
-- A statement that records events of a watched account notifies the channel switchboard_embed with
-- the account's id, at the commit of its transaction. NOTIFY serialises the commits of the
-- transactions that use it, so accounts nobody watches (nearly every event) cost only the lookup.
CREATE FUNCTION embed_notify_events() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_notify('switchboard_embed', n.account_id) FROM (SELECT DISTINCT account_id FROM new_events) n JOIN embed_watches w ON w.account_id = n.account_id AND w.until > now(); RETURN NULL; END $$;
-- dialect: postgres
CREATE TRIGGER events_embed_notify AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
	FOR EACH STATEMENT EXECUTE FUNCTION embed_notify_events();
