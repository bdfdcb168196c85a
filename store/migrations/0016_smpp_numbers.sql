-- The numbers an operator routes to the installation over its SMPP bind (carriers/smpp): the
-- SMPP route's inventory, from which accounts take numbers through the API like any purchase.
CREATE TABLE smpp_numbers (
	number TEXT PRIMARY KEY,
	type TEXT NOT NULL,
	country TEXT NOT NULL,
	added_at {{TS}} NOT NULL,
	taken_at {{TS}}
);
