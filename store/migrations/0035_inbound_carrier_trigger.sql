-- dialect: postgres
-- messages.inbound_carrier_id (0023) stops being a stored generated column on PostgreSQL and is
-- written by a trigger on the insert of an inbound message (issue 21). PostgreSQL 15 computed the
-- generated column for every row that a statement inserted or updated, the claim's, the record of
-- submissions' and the receipts' updates included, each time forming the whole wide row again:
-- about 1.1% of the backends' CPU in a perf profile of the e2e benchmark. The trigger's WHEN
-- spares outbound messages any call. There is no trigger on updates, which would lock each
-- updated row first (a WAL record a row): no statement changes an inbound message's carrier id
-- or a message's direction, and the check refuses one that would, so the column stays the
-- carrier id of inbound messages and NULL for the others, as 0023 made it. The check is NOT
-- VALID because the existing rows hold the generated values. SQLite keeps its virtual column.
ALTER TABLE messages ALTER COLUMN inbound_carrier_id DROP EXPRESSION;
-- dialect: postgres
CREATE FUNCTION messages_inbound_carrier_id() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.inbound_carrier_id := NEW.carrier_id; RETURN NEW; END $$;
-- dialect: postgres
CREATE TRIGGER messages_inbound_carrier_id BEFORE INSERT ON messages
	FOR EACH ROW WHEN (NEW.direction = 'inbound') EXECUTE FUNCTION messages_inbound_carrier_id();
-- dialect: postgres
ALTER TABLE messages ADD CONSTRAINT messages_inbound_carrier_id
	CHECK (inbound_carrier_id IS NOT DISTINCT FROM CASE WHEN direction = 'inbound' THEN carrier_id END) NOT VALID;
