-- What every sent message writes beyond what its readers need (issue 21).
--
-- events_project (project_id, id) cost an index entry for each event, three per sent message
-- (conversation.created, message.sent, message.delivered). Its readers:
--   - FailedDeliveriesSince (the console's and CLI's webhook replay) filters the events of the
--     project's failed deliveries: PostgreSQL finds those deliveries first and looks each event up
--     by its primary key (the same plan with and without this index, on 600k events);
--   - ListEvents, a project's events newest first, is read only by specs: it walks the primary
--     key, whose order is the id order it pages by;
--   - EventsSince is the benchmark's read after a run.
-- The embedded inbox's stream reads an account's events through events_account_type, which stays.
-- Nothing else reads events by project (retention walks the primary key).
DROP INDEX events_project;
-- dialect: postgres
-- A sent message's status changes three times after its insert (sending, sent, delivered), each
-- step a statement over a batch of messages, which are neighbours in the table (they were sent
-- together). An update is heap-only only when its page has room for the new version, and the room
-- a statement's own earlier updates took is not reclaimed before it commits. In the end-to-end
-- benchmark, 70% of these updates were heap-only at fillfactor 70 (the others wrote a new entry in
-- each of the table's three indexes), 82% at 50 and 92% at 40, where a page has room for a new
-- version and a half of each of its rows. Only pages written from now on are filled this way.
ALTER TABLE messages SET (fillfactor = 40);
-- dialect: postgres
-- A send to a new recipient creates its contact and conversation. Their foreign keys checked each
-- row with a query that locks the account's, the number's and the new contact's rows
-- (FOR KEY SHARE): a WAL record for each lock, and for the account's and number's rows, which
-- every concurrent send locks, a new multixact per statement. Messages have no foreign key for
-- the same reason (0004). Nothing deletes accounts, phone numbers (a released number keeps its
-- row), contacts or conversations, and the store writes a contact only for an account it has read
-- and a conversation only with a number it has read and the contact it has just found or created.
-- (SQLite keeps them: dropping a constraint there rebuilds the table.)
ALTER TABLE contacts DROP CONSTRAINT contacts_account_id_fkey;
-- dialect: postgres
ALTER TABLE conversations DROP CONSTRAINT conversations_account_id_fkey;
-- dialect: postgres
ALTER TABLE conversations DROP CONSTRAINT conversations_phone_number_id_fkey;
-- dialect: postgres
ALTER TABLE conversations DROP CONSTRAINT conversations_contact_id_fkey;
