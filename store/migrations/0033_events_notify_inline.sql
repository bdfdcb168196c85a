-- dialect: postgres
-- The embeds' notification of a watched account's new events (0020) moves from a statement-level
-- trigger on events into the statements that insert events (issue 21): every one of them on
-- PostgreSQL is the store's fan-out (store/events.go, eventsFanout), whose nt notifies the same
-- channel with the same accounts, or InsertEventFor, which notifies the same way. The trigger
-- copied each new event into a transition table and ran a PL/pgSQL function for every such
-- statement, about 35-45 µs a statement (the send's, the dispatch's and the receipts'), where the
-- lookup in the statement costs next to nothing.
DROP TRIGGER events_embed_notify ON events;
-- dialect: postgres
DROP FUNCTION embed_notify_events();
