-- The Twilio adapter's registrations (carriers/twilio): each account's brand as registered at
-- Twilio so far (TrustHub customer profile, A2P trust product, brand registration, Messaging
-- Service; JSON), each campaign or toll-free verification submitted (JSON, open until its
-- verdict is reported or it is withdrawn), and the Messaging Service each number was added to.
CREATE TABLE twilio_brands (
	account_id TEXT PRIMARY KEY,
	state TEXT NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE TABLE twilio_registrations (
	reference TEXT PRIMARY KEY,
	account_id TEXT NOT NULL,
	state TEXT NOT NULL,
	open BOOLEAN NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE INDEX twilio_registrations_open ON twilio_registrations(account_id) WHERE open;
CREATE TABLE twilio_numbers (
	number TEXT PRIMARY KEY,
	service_sid TEXT NOT NULL,
	updated_at {{TS}} NOT NULL
);
