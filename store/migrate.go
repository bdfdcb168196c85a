package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// migration is one versioned schema step. Its SQL is written once for both dialects with the
// placeholders that ddl replaces: {{TS}} timestamp, {{SERIAL}} auto-increment primary key,
// {{BLOB}} binary.
type migration struct {
	version int
	name    string
	up      string
}

// migrations are applied in order and recorded in schema_migrations. Append only: never edit a
// migration that has been released.
var migrations = []migration{
	{1, "projects, keys, accounts, users, contacts, api logs, idempotency, signing keys", `
CREATE TABLE projects (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	locked_at {{TS}},
	created_at {{TS}} NOT NULL
);
CREATE TABLE api_keys (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL REFERENCES projects(id),
	kind TEXT NOT NULL,
	hash TEXT NOT NULL UNIQUE,
	hint TEXT NOT NULL,
	created_at {{TS}} NOT NULL,
	revoked_at {{TS}}
);
CREATE INDEX api_keys_project ON api_keys(project_id, id);
CREATE TABLE accounts (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL REFERENCES projects(id),
	name TEXT NOT NULL,
	brand_name TEXT,
	organization TEXT NOT NULL,
	time_zone TEXT,
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL,
	archived_at {{TS}}
);
CREATE INDEX accounts_project ON accounts(project_id, id);
CREATE TABLE users (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	first_name TEXT NOT NULL,
	last_name TEXT,
	metadata TEXT NOT NULL,
	photo_url TEXT,
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL,
	deleted_at {{TS}}
);
CREATE INDEX users_account ON users(account_id, id);
CREATE TABLE contacts (
	id TEXT PRIMARY KEY,
	project_id TEXT NOT NULL,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	phone_number TEXT NOT NULL,
	email TEXT,
	first_name TEXT,
	last_name TEXT,
	metadata TEXT NOT NULL,
	outbound_disabled BOOLEAN NOT NULL DEFAULT FALSE,
	opted_out BOOLEAN NOT NULL DEFAULT FALSE,
	created_at {{TS}} NOT NULL,
	updated_at {{TS}} NOT NULL
);
CREATE UNIQUE INDEX contacts_account_phone ON contacts(account_id, phone_number);
CREATE INDEX contacts_account ON contacts(account_id, id);
CREATE TABLE api_logs (
	id {{SERIAL}},
	project_id TEXT NOT NULL,
	key_id TEXT NOT NULL,
	request_id TEXT NOT NULL,
	method TEXT NOT NULL,
	path TEXT NOT NULL,
	status INTEGER NOT NULL,
	duration_micros BIGINT NOT NULL,
	created_at {{TS}} NOT NULL
);
CREATE INDEX api_logs_project ON api_logs(project_id, id);
CREATE TABLE idempotency_keys (
	project_id TEXT NOT NULL,
	key TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	status INTEGER NOT NULL,
	body {{BLOB}},
	content_type TEXT NOT NULL DEFAULT '',
	created_at {{TS}} NOT NULL,
	PRIMARY KEY (project_id, key)
);
CREATE TABLE signing_keys (
	id TEXT PRIMARY KEY,
	seed {{BLOB}} NOT NULL,
	created_at {{TS}} NOT NULL
);
`},
}

func (s *Store) ddl(sql string) string {
	r := map[Dialect]*strings.Replacer{
		Postgres: strings.NewReplacer("{{TS}}", "TIMESTAMPTZ", "{{SERIAL}}", "BIGSERIAL PRIMARY KEY", "{{BLOB}}", "BYTEA"),
		SQLite:   strings.NewReplacer("{{TS}}", "DATETIME", "{{SERIAL}}", "INTEGER PRIMARY KEY AUTOINCREMENT", "{{BLOB}}", "BLOB"),
	}[s.dialect]
	return r.Replace(sql)
}

// AppliedMigration is one row of schema_migrations.
type AppliedMigration struct {
	Version   int
	Name      string
	AppliedAt time.Time
}

// Migrate applies every pending migration in one transaction and returns those it applied.
// On PostgreSQL an advisory lock serialises instances that start together.
func (s *Store) Migrate(ctx context.Context) ([]AppliedMigration, error) {
	var applied []AppliedMigration
	err := s.q(ctx).Transaction(func(tx *gorm.DB) error {
		if s.dialect == Postgres {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(7305047)").Error; err != nil {
				return fmt.Errorf("store: migration lock: %w", err)
			}
		}
		if err := tx.Exec(s.ddl(`CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at {{TS}} NOT NULL)`)).Error; err != nil {
			return fmt.Errorf("store: create schema_migrations: %w", err)
		}
		var done []int
		if err := tx.Raw("SELECT version FROM schema_migrations").Scan(&done).Error; err != nil {
			return fmt.Errorf("store: read schema_migrations: %w", err)
		}
		have := map[int]bool{}
		for _, v := range done {
			have[v] = true
		}
		for _, m := range migrations {
			if have[m.version] {
				continue
			}
			for _, stmt := range strings.Split(s.ddl(m.up), ";") {
				if strings.TrimSpace(stmt) == "" {
					continue
				}
				if err := tx.Exec(stmt).Error; err != nil {
					return fmt.Errorf("store: migration %d (%s): %w", m.version, m.name, err)
				}
			}
			row := AppliedMigration{Version: m.version, Name: m.name, AppliedAt: time.Now().UTC()}
			if err := tx.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
				row.Version, row.Name, row.AppliedAt).Error; err != nil {
				return fmt.Errorf("store: record migration %d: %w", m.version, err)
			}
			applied = append(applied, row)
		}
		return nil
	})
	return applied, err
}

// PendingMigrations reports how many migrations Migrate would apply.
func (s *Store) PendingMigrations(ctx context.Context) (int, error) {
	var done []int
	if err := s.q(ctx).Raw("SELECT version FROM schema_migrations").Scan(&done).Error; err != nil {
		return len(migrations), nil //nolint:nilerr // no table yet: everything is pending
	}
	return len(migrations) - len(done), nil
}
