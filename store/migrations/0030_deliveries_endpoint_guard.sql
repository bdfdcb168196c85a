-- dialect: postgres
-- A webhook delivery's foreign key to its endpoint (PostgreSQL), replaced by a guard on the
-- endpoint's side (issue 21). The key checked every delivery the fan-out writes with a query that
-- locked the endpoint's row (FOR KEY SHARE): about 10 µs of PostgreSQL per delivery, the largest
-- part of the receipts' events statement after its inserts (EXPLAIN ANALYZE of a batch of 100 on
-- a database the size of an e2e run's: 1.0 of 4.1 ms), and a multixact per statement when two
-- transactions fan out to one endpoint. The fan-out writes deliveries only for the endpoints it
-- reads in the same statement, and nothing in Switchboard deletes an endpoint (it is disabled
-- instead), so the key's other side is what is left to keep: the guard refuses to delete (or to
-- renumber) an endpoint that has deliveries, with the key's error (23503), as the key did. It
-- first takes a SHARE lock on webhook_deliveries, which waits for the transactions writing
-- deliveries and holds new ones back until the deleting transaction ends (a statement takes its
-- table locks before its snapshot), so a delivery written at the same time is seen or never
-- written. SQLite keeps the key (dropping a constraint there rebuilds the table).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey;
-- dialect: postgres
CREATE FUNCTION webhook_endpoints_keep_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN RETURN NEW; END IF; LOCK TABLE webhook_deliveries IN SHARE MODE; IF EXISTS (SELECT 1 FROM webhook_deliveries WHERE endpoint_id = OLD.id) THEN RAISE EXCEPTION USING ERRCODE = 'foreign_key_violation', MESSAGE = format('webhook endpoint %s has deliveries', OLD.id); END IF; IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; RETURN NEW; END $$;
-- dialect: postgres
CREATE TRIGGER webhook_endpoints_keep_deliveries BEFORE DELETE OR UPDATE OF id ON webhook_endpoints
	FOR EACH ROW EXECUTE FUNCTION webhook_endpoints_keep_deliveries();
