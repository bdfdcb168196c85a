-- The simulated carrier keeps the receipts it owes in a table of its own instead of a River job
-- per batch of submissions (issue 21): a row per batch, written in the transaction that puts the
-- batch into sim_outbox, due some time after the receipts' latency (its grace), and deleted once
-- the process that accepted the batch has reported them. The sweep of every instance claims the
-- rows that came due (those of a process that ended first), leasing each by moving its due_at.
-- Rows live for well under a second: no index but the key, and the sweep reads the table whole.
CREATE TABLE sim_receipts (
	id {{SERIAL}},
	due_at {{TS}} NOT NULL,
	receipts TEXT NOT NULL
);
