-- Indexes that every sent message paid for and that only rare reads use (issue 21).
--
-- messages_demo_reply found the message the shared demo number last sent to a handset (an inbound
-- message to the demo number belongs to that account's conversation). It indexed every message,
-- an entry written with each send; only the demo number's own messages are now indexed, which are
-- the only ones that read asks for (DemoCorrespondent names the demo sender type).
DROP INDEX messages_demo_reply;
CREATE INDEX messages_demo_reply ON messages(phone_number_id, to_number, id) WHERE sender_type = 'demo';
-- dialect: postgres
-- The simulated carrier's ids are unique by construction (TypeIDs made at submission) and nothing
-- looks an entry up by them, so their unique index only cost an entry per submission. (SQLite
-- keeps it: dropping a column's constraint there rebuilds the table.)
ALTER TABLE sim_outbox DROP CONSTRAINT sim_outbox_carrier_id_key;
