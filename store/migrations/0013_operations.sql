-- Operations: the webhook backlog per endpoint (switchboard_webhook_backlog) reads the pending
-- deliveries only.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(endpoint_id, created_at) WHERE status = 'pending';
