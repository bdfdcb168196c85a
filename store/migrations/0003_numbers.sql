-- Phone numbers, 10DLC campaigns and toll-free verifications.
CREATE TABLE phone_numbers (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT,
	number TEXT NOT NULL,
	type TEXT NOT NULL,
	country TEXT NOT NULL,
	name TEXT,
	metadata TEXT NOT NULL,
	carrier TEXT NOT NULL,
	campaign_id TEXT,
	attachment_status TEXT,
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL,
	released_at {{TS}}
);
CREATE UNIQUE INDEX phone_numbers_held ON phone_numbers(number) WHERE released_at IS NULL;
CREATE INDEX phone_numbers_account ON phone_numbers(account_id, id);
CREATE TABLE campaigns (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	status TEXT NOT NULL,
	params TEXT NOT NULL,
	tcr_id TEXT,
	rejection_reason TEXT,
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE INDEX campaigns_account ON campaigns(account_id, id);
CREATE TABLE toll_free_campaigns (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	phone_number_id TEXT NOT NULL REFERENCES phone_numbers(id),
	status TEXT NOT NULL,
	params TEXT NOT NULL,
	rejection_reason TEXT,
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE INDEX toll_free_campaigns_account ON toll_free_campaigns(account_id, id);
CREATE INDEX toll_free_campaigns_number ON toll_free_campaigns(phone_number_id);
