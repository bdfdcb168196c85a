-- dialect: postgres
-- Every text column in an index or a foreign key takes the collation "C" (issue 21). In a
-- database whose collation is not C or POSIX (C.UTF-8 here, en_US.UTF-8 in many installations)
-- PostgreSQL 15 compares such text through strcoll, copying both values to terminate them, and
-- each insert into a btree on text descends the tree with such comparisons; in "C" it is a
-- memcmp. The keys are ids, references, phone numbers, hashes and type names: their order is
-- their bytes', as Go's and SQLite's is. Human text (names, bodies, emails of contacts) keeps the
-- database's collation, so that LOWER and its search keep folding non-ASCII letters. Equality is
-- the same in both, and a comparison of a "C" column with one of the default collation is made in
-- "C", so a column left in the default collation never keeps an index of these from a join. The
-- tables are not rewritten: each altered column's indexes are rebuilt, under the table's exclusive
-- lock. The two triggers on updates of id are dropped and made again around it (PostgreSQL does
-- not alter a column that a trigger names). messages.carrier_id stays: the generated column
-- inbound_carrier_id (indexed, "C") reads it. A store spec fails when a text column of an index
-- or a key is not in "C", so that a later migration cannot mix them.
DROP TRIGGER events_keep_deliveries ON events;
-- dialect: postgres
DROP TRIGGER webhook_endpoints_keep_deliveries ON webhook_endpoints;
-- dialect: postgres
ALTER TABLE accounts
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN project_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE api_keys
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN project_id TYPE text COLLATE "C",
	ALTER COLUMN hash TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE api_logs
	ALTER COLUMN project_id TYPE text COLLATE "C",
	ALTER COLUMN key_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE attachments
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN message_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE audience_contacts
	ALTER COLUMN audience_id TYPE text COLLATE "C",
	ALTER COLUMN contact_id TYPE text COLLATE "C",
	ALTER COLUMN id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE audiences
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE blast_recipients
	ALTER COLUMN blast_id TYPE text COLLATE "C",
	ALTER COLUMN phone_number TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE blasts
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C",
	ALTER COLUMN phone_number_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE blocked_numbers
	ALTER COLUMN account_id TYPE text COLLATE "C",
	ALTER COLUMN phone_number TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE calls
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C",
	ALTER COLUMN phone_number_id TYPE text COLLATE "C",
	ALTER COLUMN contact_id TYPE text COLLATE "C",
	ALTER COLUMN carrier TYPE text COLLATE "C",
	ALTER COLUMN carrier_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE campaigns
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE console_audit
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN project_id TYPE text COLLATE "C",
	ALTER COLUMN actor_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE console_members
	ALTER COLUMN project_id TYPE text COLLATE "C",
	ALTER COLUMN user_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE console_sessions
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN token_hash TYPE text COLLATE "C",
	ALTER COLUMN user_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE console_users
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN email TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE contacts
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C",
	ALTER COLUMN phone_number TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE conversation_reads
	ALTER COLUMN user_id TYPE text COLLATE "C",
	ALTER COLUMN conversation_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE conversations
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C",
	ALTER COLUMN phone_number_id TYPE text COLLATE "C",
	ALTER COLUMN contact_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE demo_usage
	ALTER COLUMN account_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE embed_origins
	ALTER COLUMN project_id TYPE text COLLATE "C",
	ALTER COLUMN origin TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE embed_watches
	ALTER COLUMN account_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE events
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C",
	ALTER COLUMN type TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE idempotency_keys
	ALTER COLUMN project_id TYPE text COLLATE "C",
	ALTER COLUMN key TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE installation_secrets
	ALTER COLUMN name TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE links
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN code TYPE text COLLATE "C",
	ALTER COLUMN message_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE messages
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C",
	ALTER COLUMN conversation_id TYPE text COLLATE "C",
	ALTER COLUMN phone_number_id TYPE text COLLATE "C",
	ALTER COLUMN contact_id TYPE text COLLATE "C",
	ALTER COLUMN to_number TYPE text COLLATE "C",
	ALTER COLUMN carrier TYPE text COLLATE "C",
	ALTER COLUMN blast_id TYPE text COLLATE "C",
	ALTER COLUMN inbound_carrier_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE outbound_queue
	ALTER COLUMN message_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE phone_numbers
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C",
	ALTER COLUMN number TYPE text COLLATE "C",
	ALTER COLUMN campaign_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE projects
	ALTER COLUMN id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE publishable_tokens
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN project_id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C",
	ALTER COLUMN hash TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE recordings
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C",
	ALTER COLUMN call_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE sender_pacing
	ALTER COLUMN phone_number_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE signing_keys
	ALTER COLUMN id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE sim_numbers
	ALTER COLUMN number TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE sim_outbox
	ALTER COLUMN reference TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE sim_reviews
	ALTER COLUMN reference TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE smpp_inbound_parts
	ALTER COLUMN source TYPE text COLLATE "C",
	ALTER COLUMN destination TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE smpp_numbers
	ALTER COLUMN number TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE smpp_parts
	ALTER COLUMN reference TYPE text COLLATE "C",
	ALTER COLUMN smsc_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE smpp_submissions
	ALTER COLUMN reference TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE telnyx_brands
	ALTER COLUMN account_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE telnyx_registrations
	ALTER COLUMN reference TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE telnyx_submissions
	ALTER COLUMN reference TYPE text COLLATE "C",
	ALTER COLUMN message_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE toll_free_campaigns
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C",
	ALTER COLUMN phone_number_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE twilio_brands
	ALTER COLUMN account_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE twilio_numbers
	ALTER COLUMN number TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE twilio_registrations
	ALTER COLUMN reference TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE twilio_submissions
	ALTER COLUMN reference TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE users
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE verifications
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE voicemails
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN account_id TYPE text COLLATE "C",
	ALTER COLUMN call_id TYPE text COLLATE "C",
	ALTER COLUMN recording_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE webhook_deliveries
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN project_id TYPE text COLLATE "C",
	ALTER COLUMN event_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE webhook_endpoints
	ALTER COLUMN id TYPE text COLLATE "C",
	ALTER COLUMN project_id TYPE text COLLATE "C";
-- dialect: postgres
ALTER TABLE webhook_queue
	ALTER COLUMN delivery_id TYPE text COLLATE "C";
-- dialect: postgres
CREATE TRIGGER events_keep_deliveries BEFORE DELETE OR UPDATE OF id ON events
	FOR EACH ROW EXECUTE FUNCTION events_keep_deliveries();
-- dialect: postgres
CREATE TRIGGER webhook_endpoints_keep_deliveries BEFORE DELETE OR UPDATE OF id ON webhook_endpoints
	FOR EACH ROW EXECUTE FUNCTION webhook_endpoints_keep_deliveries();
