-- dialect: postgres
-- The queues (outbound_queue, webhook_queue) are emptied by deletes as fast as they are filled.
-- A VACUUM that finds empty pages at the end of a table then tries to truncate it, which takes the
-- table's ACCESS EXCLUSIVE lock: autovacuum did so for seconds at a time under load, holding back
-- every claim of the queue and the store's own VACUUM (SKIP_LOCKED, which then skipped it). The
-- store's VACUUM already says TRUNCATE false; this says it for autovacuum too. The pages stay
-- allocated for the rows that come next.
ALTER TABLE outbound_queue SET (vacuum_truncate = false);
-- dialect: postgres
ALTER TABLE webhook_queue SET (vacuum_truncate = false);
