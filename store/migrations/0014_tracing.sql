-- Tracing: the W3C traceparent of the request that sent a message, and of the work that made an
-- event, so that the message's dispatch and the event's webhooks continue that trace. Empty
-- unless tracing is on (SWITCHBOARD_OTLP_ENDPOINT).
ALTER TABLE messages ADD COLUMN traceparent TEXT;
ALTER TABLE events ADD COLUMN traceparent TEXT;
