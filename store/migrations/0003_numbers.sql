-- Phone numbers, 10DLC campaigns, toll-free verifications, the shared demo number and the
-- simulated carrier's inventory and reviews.
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
CREATE INDEX phone_numbers_campaign ON phone_numbers(campaign_id);
CREATE TABLE campaigns (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	carrier TEXT NOT NULL,
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
	carrier TEXT NOT NULL,
	status TEXT NOT NULL,
	params TEXT NOT NULL,
	rejection_reason TEXT,
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE INDEX toll_free_campaigns_account ON toll_free_campaigns(account_id, id);
-- A toll-free number has at most one verification that is not finished (rejected or canceled).
CREATE UNIQUE INDEX toll_free_campaigns_open ON toll_free_campaigns(phone_number_id)
	WHERE status IN ('created', 'in_review', 'active');
-- The installation's shared demo number, through which demo keys send. It belongs to no project
-- and is never purchasable. The simulated carrier, which every installation runs beside its real
-- carriers, provides it: demo traffic is for evaluation and never reaches a real network.
INSERT INTO phone_numbers (id, project_id, account_id, number, type, country, name, metadata, carrier,
	created_at, updated_at)
VALUES ('pn_01m809xke0e30awmwne8s7dzbh', '', NULL, '+18335550000', 'demo', 'US', 'Switchboard demo', '{}', 'sim',
	'2025-01-01 00:00:00+00:00', '2025-01-01 00:00:00+00:00');
-- The simulated carrier (carriers/sim): the numbers it has provisioned to this installation, and
-- the campaign reviews it has been asked for (reference = cpn_… or tfc_…).
CREATE TABLE sim_numbers (
	number TEXT PRIMARY KEY,
	provisioned_at {{TS}} NOT NULL
);
CREATE TABLE sim_reviews (
	reference TEXT PRIMARY KEY,
	description TEXT NOT NULL,
	tcr_id TEXT NOT NULL,
	submitted_at {{TS}} NOT NULL,
	decided_at {{TS}}
);
