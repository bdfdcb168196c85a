-- dialect: postgres
-- A webhook delivery's foreign key to its event (PostgreSQL), replaced by a guard on the event's
-- side, as 0030 did for the endpoint (issue 21). The key checked every delivery the fan-out writes
-- with a query that locked the event's row (FOR KEY SHARE): a WAL record per delivery, and 0.27 of
-- 1.3 ms in EXPLAIN ANALYZE of a receipts' events statement of 86 (3 µs a delivery), though the
-- fan-out writes deliveries only for the events it inserts in the same statement, which nobody
-- else sees before it commits. What is left to keep is the key's other side: an event is deleted
-- (retention) or renumbered only when no delivery names it. The guard refuses that with the key's
-- error (23503), after the row's lock the delete takes first; the store's one writer of deliveries
-- for events that already exist (InsertWebhookDeliveries: replays, the fan-out jobs of earlier
-- releases) takes the events' rows FOR KEY SHARE first, as the key's check did, so a delete waits
-- for that transaction and then sees its deliveries, or the writer waits for the delete and finds
-- the event gone. SQLite keeps the key (dropping a constraint there rebuilds the table).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey;
-- dialect: postgres
CREATE FUNCTION events_keep_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN RETURN NEW; END IF; IF EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_id = OLD.id) THEN RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', MESSAGE = format('event %s has webhook deliveries', OLD.id); END IF; IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; RETURN NEW; END $$;
-- dialect: postgres
CREATE TRIGGER events_keep_deliveries BEFORE DELETE OR UPDATE OF id ON events
	FOR EACH ROW EXECUTE FUNCTION events_keep_deliveries();
