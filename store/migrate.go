package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Migrations are the SQL files in migrations/, applied in the order of their names
// (NNNN_name.sql; NNNN is the version) and recorded in schema_migrations. One file is written
// for both dialects with placeholders that ddl replaces: {{TS}} timestamp, {{SERIAL}}
// auto-increment primary key, {{BLOB}} binary. Statements are separated by ";" at a line's end.
// A statement whose first line is "-- dialect: postgres" (or sqlite) runs on that dialect only.
// Never edit a released migration: add a file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	up      string
}

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("store: migration file %s is not NNNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && out[len(out)-1].version >= v {
			return nil, fmt.Errorf("store: migration %s repeats or reorders version %d", e.Name(), v)
		}
		out = append(out, migration{version: v, name: name, up: string(b)})
	}
	return out, nil
}

func (s *Store) ddl(sql string) string {
	r := map[Dialect]*strings.Replacer{
		Postgres: strings.NewReplacer("{{TS}}", "TIMESTAMPTZ", "{{SERIAL}}", "BIGSERIAL PRIMARY KEY", "{{BLOB}}", "BYTEA"),
		SQLite:   strings.NewReplacer("{{TS}}", "DATETIME", "{{SERIAL}}", "INTEGER PRIMARY KEY AUTOINCREMENT", "{{BLOB}}", "BLOB"),
	}[s.dialect]
	return r.Replace(sql)
}

// forDialect reports whether a migration statement runs on this store's dialect: all do, except
// those whose first line is "-- dialect: NAME" for another one.
func (s *Store) forDialect(stmt string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(stmt), "\n")
	d, ok := strings.CutPrefix(strings.TrimSpace(first), "-- dialect:")
	return !ok || Dialect(strings.TrimSpace(d)) == s.dialect
}

// AppliedMigration is one row of schema_migrations.
type AppliedMigration struct {
	Version   int       `json:"version"`
	Name      string    `json:"name"`
	AppliedAt time.Time `json:"applied_at"`
}

// Migrate applies every pending migration in one transaction, then the job queue's own, and
// returns those it applied. On PostgreSQL a session advisory lock, held across both, serialises
// instances that start together: River's migrations are not safe to run twice at once.
func (s *Store) Migrate(ctx context.Context) ([]AppliedMigration, error) {
	if s.dialect == Postgres {
		unlock, err := s.sessionLock(ctx, migrationSessionLock)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	applied := []AppliedMigration{}
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
		migrations, err := loadMigrations()
		if err != nil {
			return err
		}
		for _, m := range migrations {
			if have[m.version] {
				continue
			}
			for _, stmt := range strings.Split(s.ddl(m.up), ";\n") {
				if strings.TrimSpace(stmt) == "" || !s.forDialect(stmt) {
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
	if err != nil {
		return nil, err
	}
	return applied, s.migrateQueue(ctx)
}

// migrationSessionLock is the advisory lock key Migrate holds for its whole run; the
// transaction's own key (7305047) stays what earlier releases take.
const migrationSessionLock = 7305048

// sessionLock takes a PostgreSQL session advisory lock on a connection of its own and returns
// what releases it.
func (s *Store) sessionLock(ctx context.Context, key int64) (unlock func(), err error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, err
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migration lock: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("store: migration lock: %w", err)
	}
	return func() {
		_, _ = conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", key)
		_ = conn.Close()
	}, nil
}

// PendingMigrations reports how many migrations Migrate would apply.
func (s *Store) PendingMigrations(ctx context.Context) (int, error) {
	migrations, err := loadMigrations()
	if err != nil {
		return 0, err
	}
	var done []int
	if err := s.q(ctx).Raw("SELECT version FROM schema_migrations").Scan(&done).Error; err != nil {
		return len(migrations), nil //nolint:nilerr // no table yet: everything is pending
	}
	return len(migrations) - len(done), nil
}

// MigrationState is one migration and whether this database has it.
type MigrationState struct {
	Version int    `json:"version"`
	Name    string `json:"name"`
	// AppliedAt is when it was applied; nil while it is pending.
	AppliedAt *time.Time `json:"applied_at"`
	// Unknown marks a migration the database has but this binary does not carry: it was applied
	// by a newer release.
	Unknown bool `json:"unknown,omitempty"`
}

// MigrationStatus lists every migration this binary carries, applied or pending, in order, then
// any the database has from a newer release.
func (s *Store) MigrationStatus(ctx context.Context) ([]MigrationState, error) {
	migrations, err := loadMigrations()
	if err != nil {
		return nil, err
	}
	var rows []AppliedMigration
	if err := s.q(ctx).Raw("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").Scan(&rows).Error; err != nil {
		rows = nil // no table yet: everything is pending
	}
	applied := map[int]AppliedMigration{}
	for _, r := range rows {
		applied[r.Version] = r
	}
	out := make([]MigrationState, 0, len(migrations))
	for _, m := range migrations {
		st := MigrationState{Version: m.version, Name: m.name}
		if r, ok := applied[m.version]; ok {
			at := r.AppliedAt
			st.AppliedAt = &at
			delete(applied, m.version)
		}
		out = append(out, st)
	}
	for _, r := range rows {
		if _, ok := applied[r.Version]; ok {
			at := r.AppliedAt
			out = append(out, MigrationState{Version: r.Version, Name: r.Name, AppliedAt: &at, Unknown: true})
		}
	}
	return out, nil
}

// SchemaVersion is the version of the newest migration this binary carries.
func SchemaVersion() int {
	migrations, err := loadMigrations()
	if err != nil || len(migrations) == 0 {
		return 0
	}
	return migrations[len(migrations)-1].version
}
