-- The Telnyx adapter's state (carriers/telnyx): the messages Telnyx accepted under our reference
-- (Telnyx has no client reference), each account's 10DLC brand, and each campaign or toll-free
-- verification submitted (JSON, open until its verdict is reported or it is withdrawn).
CREATE TABLE telnyx_submissions (
	reference TEXT PRIMARY KEY,
	message_id TEXT NOT NULL UNIQUE,
	created_at {{TS}} NOT NULL
);
CREATE TABLE telnyx_brands (
	account_id TEXT PRIMARY KEY,
	brand_id TEXT NOT NULL,
	created_at {{TS}} NOT NULL
);
CREATE TABLE telnyx_registrations (
	reference TEXT PRIMARY KEY,
	account_id TEXT NOT NULL,
	state TEXT NOT NULL,
	open BOOLEAN NOT NULL,
	updated_at {{TS}} NOT NULL
);
