-- Inbound media: an inbound attachment is fetched from the carrier by a job; one that could not be
-- fetched after every retry is unavailable (its carrier URL stays here, never shown to customers).
ALTER TABLE attachments ADD COLUMN unavailable_at {{TS}};
