package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// TestDatabaseEnv names the variable that points the test suites at PostgreSQL: a postgres:// URL
// of a role that may create databases. Unset, suites use a fresh SQLite file.
const TestDatabaseEnv = "SWITCHBOARD_TEST_DATABASE_URL"

// OpenTest opens a fresh, migrated database for one test suite and returns it with a cleanup
// function: a SQLite file in dir, or, when TestDatabaseEnv is set, a new PostgreSQL database
// created for the suite and dropped by cleanup.
func OpenTest(ctx context.Context, dir string) (*Store, func(), error) {
	admin := os.Getenv(TestDatabaseEnv)
	if admin == "" {
		st, err := Open(ctx, Config{URL: filepath.Join(dir, "test.db")})
		if err != nil {
			return nil, nil, err
		}
		if _, err := st.Migrate(ctx); err != nil {
			return nil, nil, err
		}
		return st, func() { _ = st.Close() }, nil
	}
	u, err := url.Parse(admin)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", TestDatabaseEnv, err)
	}
	adm, err := Open(ctx, Config{URL: admin, MaxOpenConns: 1})
	if err != nil {
		return nil, nil, err
	}
	name := "sbtest_" + strings.ToLower(rand.Text()[:12])
	if err := adm.db.Exec("CREATE DATABASE " + name).Error; err != nil {
		_ = adm.Close()
		return nil, nil, fmt.Errorf("create test database: %w", err)
	}
	u.Path = "/" + name
	st, err := Open(ctx, Config{URL: u.String()})
	if err == nil {
		_, err = st.Migrate(ctx)
	}
	cleanup := func() {
		if st != nil {
			_ = st.Close()
		}
		_ = adm.db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error
		_ = adm.Close()
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return st, cleanup, nil
}

// OpenAgain opens a second handle on st's database, as another instance of the server would have
// one: its own connections, its own caches and its own listening connection. Close it apart.
func OpenAgain(ctx context.Context, st *Store) (*Store, error) {
	return Open(ctx, st.cfg)
}
