-- Message dispatch and webhook deliveries are queues of their own rather than a job per message
-- and per delivery: dispatchers claim due rows in batches (FOR UPDATE SKIP LOCKED on PostgreSQL)
-- and record a whole batch's outcome in one statement.
--
-- outbound_queue holds each outbound message that still has to reach its carrier: due_at is when
-- it is next due (at once, its send_at, its pacing slot, the retry of a failed submission, or the
-- end of the lease of the dispatch that claimed it), attempts counts its claims. A row leaves the
-- queue in the statement that records the message sent, failed or canceled.
CREATE TABLE outbound_queue (
	message_id TEXT PRIMARY KEY,
	due_at {{TS}} NOT NULL,
	attempts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX outbound_queue_due ON outbound_queue(due_at);
INSERT INTO outbound_queue (message_id, due_at)
	SELECT id, COALESCE(not_before, send_at, created_at) FROM messages
	WHERE direction = 'outbound' AND status IN ('queued', 'scheduled', 'sending');
-- A pending delivery is due at next_attempt_at (its first attempt at once).
UPDATE webhook_deliveries SET next_attempt_at = created_at WHERE status = 'pending' AND next_attempt_at IS NULL;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'pending';
-- A message's status changes three times after its insert (sending, sent, delivered): with no
-- index on status and room left in each page, those updates are heap-only (HOT), writing no
-- index entry. The blast progress counts read the status from the rows.
DROP INDEX messages_blast;
CREATE INDEX messages_blast ON messages(blast_id) WHERE blast_id IS NOT NULL;
-- dialect: postgres
ALTER TABLE messages SET (fillfactor = 70);
-- dialect: postgres
ALTER TABLE webhook_deliveries SET (fillfactor = 80);
