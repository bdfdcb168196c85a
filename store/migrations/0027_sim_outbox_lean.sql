-- Nothing on the hot path reads the simulated carrier's outbox by recipient: only the operator's
-- `switchboard sim outbox --to` and specs list a handset's messages, and a table scan serves
-- them. Its index by recipient cost an entry with every submission (issue 21); the primary key
-- (the reference, which makes a repeated submission a duplicate) stays.
DROP INDEX sim_outbox_to;
