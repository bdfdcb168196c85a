-- Quiet hours (issue 21): an account may hold its messages outside a daily sending window in the
-- recipient's local time. Off by default; the window is minutes after local midnight, start
-- included and end excluded (08:00 to 21:00 by default; start > end wraps past midnight).
ALTER TABLE accounts ADD COLUMN quiet_hours BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE accounts ADD COLUMN quiet_hours_start INTEGER NOT NULL DEFAULT 480;
ALTER TABLE accounts ADD COLUMN quiet_hours_end INTEGER NOT NULL DEFAULT 1260;
-- A reply to a contact who wrote within the last 24 h is not held: the contact's latest inbound
-- message, found without walking its conversations (inbound rows only).
CREATE INDEX messages_inbound_contact ON messages(contact_id, received_at) WHERE direction = 'inbound';
