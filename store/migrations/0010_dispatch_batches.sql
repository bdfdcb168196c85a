-- Dispatch no longer looks for a sender's other queued messages (concurrent dispatches share
-- their transactions instead), so nothing reads this index; every status change paid for it.
DROP INDEX IF EXISTS messages_queued;
