-- The pending webhook deliveries have a queue table of their own, as outbound messages have
-- outbound_queue: webhook_queue holds each delivery that still has an attempt to make, due at
-- due_at unless a deliverer's claim leases it (leased_until). A row is written with its delivery
-- and leaves the queue in the statement that records the delivery succeeded or failed.
--
-- Deliverers used to claim from the partial index webhook_deliveries_due (status = 'pending'):
-- a delivery that ended left its entry there until a VACUUM of the whole deliveries table, so every
-- claim read past the entries of the deliveries finished since (about 400 pages a claim under
-- load). The queue holds only what is still to deliver, and the store vacuums it as it does the
-- outbound queue. With no index on status, the update that records a delivery's outcome no longer
-- touches an index of webhook_deliveries (it can be heap-only); next_attempt_at stays on the
-- delivery as the API shows it.
CREATE TABLE webhook_queue (
	delivery_id TEXT PRIMARY KEY,
	due_at {{TS}} NOT NULL,
	leased_until {{TS}},
	endpoint_id TEXT NOT NULL,
	event_id TEXT NOT NULL,
	attempts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX webhook_queue_due ON webhook_queue(due_at);
INSERT INTO webhook_queue (delivery_id, due_at, leased_until, endpoint_id, event_id, attempts)
	SELECT id, COALESCE(next_attempt_at, created_at), leased_until, endpoint_id, event_id, attempts
	FROM webhook_deliveries WHERE status = 'pending';
DROP INDEX webhook_deliveries_due;
ALTER TABLE webhook_deliveries DROP COLUMN leased_until;
-- dialect: postgres
-- A claim updates its rows in place (leased_until, which no index covers): leave room in each
-- page for the new versions, so that the update is heap-only.
ALTER TABLE webhook_queue SET (fillfactor = 50);
