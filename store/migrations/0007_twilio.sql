-- The Twilio adapter's submissions: Twilio's Messages API has no client reference of its own, so
-- the adapter records each message it sent under our reference (the message id) to answer a
-- repeated submission with the first one's sid instead of texting the handset twice.
CREATE TABLE twilio_submissions (
	reference TEXT PRIMARY KEY,
	sid TEXT NOT NULL,
	created_at {{TS}} NOT NULL
);
