-- Idempotency keys under faults (store/idempotency.go): a claim has a token and a lease that its
-- owner renews, and the resource a request creates is recorded with its key in the same
-- transaction. Claims of the earlier release have no lease: they count as lapsed.
ALTER TABLE idempotency_keys ADD COLUMN token TEXT NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys ADD COLUMN lease_until {{TS}};
ALTER TABLE idempotency_keys ADD COLUMN resource_id TEXT;
