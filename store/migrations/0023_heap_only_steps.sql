-- The steps after a send update rows without touching an index, so that PostgreSQL writes those
-- updates heap-only (HOT: one record for the new row version, none for the indexes), instead of
-- a new entry in every index of the table.
--
-- A claim of the outbound queue or of the webhook deliveries leases its rows in a column that no
-- index covers (leased_until) rather than by pushing their indexed due time to the end of the
-- lease: a row is due when its due time has come and it is not leased (leased_until NULL or
-- past). Recording an outcome clears the lease.
ALTER TABLE outbound_queue ADD COLUMN leased_until {{TS}};
ALTER TABLE webhook_deliveries ADD COLUMN leased_until {{TS}};
-- dialect: postgres
-- Queue rows are updated in place by their claim, a delivery then by its outcome: leave room in
-- each page for the new versions (a heap-only update must find room in its row's page). At 80,
-- a third of the deliveries' claims found room; at 50 every one did, and the deliveries' table
-- is no larger than it was with the claims' non-HOT updates spread over new pages.
ALTER TABLE outbound_queue SET (fillfactor = 50);
-- dialect: postgres
ALTER TABLE webhook_deliveries SET (fillfactor = 50);
-- The pending deliveries per endpoint (the operations backlog, a rare read) are found through
-- webhook_deliveries_due, which indexes the same rows; this index cost an entry per delivery.
DROP INDEX webhook_deliveries_pending;
-- dialect: postgres
-- An inbound message is unique by its carrier's id of it. The unique index was on
-- (carrier, carrier_id) WHERE direction = 'inbound', which made carrier_id an indexed column:
-- recording an outbound message sent, which sets its carrier_id, could never be heap-only. The
-- index is now on a generated column that holds the carrier's id of inbound messages only (NULL
-- for outbound ones, so an outbound message's update leaves it unchanged). PostgreSQL stores it,
-- computed for existing rows as the column is added (which rewrites the table once); SQLite
-- computes it when read.
ALTER TABLE messages ADD COLUMN inbound_carrier_id TEXT
	GENERATED ALWAYS AS (CASE WHEN direction = 'inbound' THEN carrier_id END) STORED;
-- dialect: sqlite
ALTER TABLE messages ADD COLUMN inbound_carrier_id TEXT
	GENERATED ALWAYS AS (CASE WHEN direction = 'inbound' THEN carrier_id END) VIRTUAL;
CREATE UNIQUE INDEX messages_inbound_carrier ON messages(carrier, inbound_carrier_id) WHERE inbound_carrier_id IS NOT NULL;
DROP INDEX messages_inbound_carrier_id;
