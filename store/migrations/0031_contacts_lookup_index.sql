-- dialect: postgres
-- The send's read of its contexts (store/send_batch.go, loadSendContextsPG) runs its generic plan,
-- made once per connection, perhaps while contacts is empty. A contact is found by its account
-- and recipient through contacts_account_phone (account_id, phone_number); on an empty or
-- never-analysed table PostgreSQL costs that index and contacts_account (account_id, id) the
-- same, and of two equal paths it keeps the one through the index created last. contacts_account
-- was (0001), and a generic plan made then read all of an account's contacts for each send until
-- an ANALYZE replaced it. Building contacts_account_phone again makes it the later one; a store
-- spec checks the generic plan on an empty table. (SQLite plans each statement itself.)
CREATE UNIQUE INDEX contacts_account_phone_new ON contacts(account_id, phone_number);
-- dialect: postgres
DROP INDEX contacts_account_phone;
-- dialect: postgres
ALTER INDEX contacts_account_phone_new RENAME TO contacts_account_phone;
