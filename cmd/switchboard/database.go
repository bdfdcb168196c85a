package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard/switchboard/store"
)

// withStore reads the command's settings, opens the database (applying pending migrations when
// migrate is set) and runs fn with it.
func (a *app) withStore(cmd *cobra.Command, migrate bool, fn func(context.Context, *store.Store) error) error {
	return a.withStoreOf(cmd, migrate, nil, fn)
}

// withStoreOf is withStore that also reads the settings of the given scopes.
func (a *app) withStoreOf(cmd *cobra.Command, migrate bool, scopes []scope, fn func(context.Context, *store.Store) error) error {
	if err := a.load(cmd, scopes...); err != nil {
		return err
	}
	ctx := cmd.Context()
	st, err := a.openStore(ctx, 0)
	if err != nil {
		return err
	}
	defer st.Close()
	if migrate {
		if _, err := st.Migrate(ctx); err != nil {
			return err
		}
	}
	return fn(ctx, st)
}

// databaseSetting is the setting that chose the database: --database-url when given, else
// --data-dir.
func (a *app) databaseSetting() *setting {
	if a.cfg.databaseURLGiven {
		return a.settings.byName("database-url")
	}
	return a.settings.byName("data-dir")
}

// isPostgres reports whether the configured database is PostgreSQL.
func (a *app) isPostgres() bool {
	return strings.HasPrefix(a.cfg.DatabaseURL, "postgres://") || strings.HasPrefix(a.cfg.DatabaseURL, "postgresql://")
}

// openStore opens the configured database. A PostgreSQL database that does not answer is
// retried with backoff (0.5 s doubling to 5 s, each wait logged) for up to wait, so that serve
// can start beside its database; a SQLite file whose directory cannot be written is refused
// with the setting to change.
func (a *app) openStore(ctx context.Context, wait time.Duration) (*store.Store, error) {
	if !a.isPostgres() {
		if err := a.checkSQLiteFile(a.cfg.DatabaseURL); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	delay := 500 * time.Millisecond
	for attempt := 1; ; attempt++ {
		st, err := store.Open(ctx, store.Config{URL: a.cfg.DatabaseURL, Logger: a.log})
		if err == nil {
			if attempt > 1 {
				a.log.Info("the database answers", "attempts", attempt, "waited", time.Since(start).Round(time.Millisecond).String())
			}
			return st, nil
		}
		if !a.isPostgres() || ctx.Err() != nil || time.Since(start)+delay > wait {
			advice := "check that it runs and that the URL, user and password are right"
			if wait > 0 {
				advice += fmt.Sprintf("; waited %s (SWITCHBOARD_DATABASE_WAIT)", time.Since(start).Round(time.Second))
			}
			if !a.isPostgres() {
				advice = "check the file and its directory"
			}
			return nil, fmt.Errorf("%s: cannot open the database: %v: %s", a.databaseSetting().label(), err, advice)
		}
		a.log.Warn("waiting for the database", "attempt", attempt, "retry_in", delay.String(),
			"gives_up_after", wait.String(), "err", err.Error())
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// checkSQLiteFile makes sure the SQLite file's directory exists and this user may write it and
// the file: SQLite itself reports a directory it cannot write as "out of memory".
func (a *app) checkSQLiteFile(path string) error {
	s := a.databaseSetting()
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%s: cannot create the directory %s: %v: create it, writable by this user (uid %d), or choose another",
			s.label(), dir, unwrapPathError(err), os.Geteuid())
	}
	probe, err := os.CreateTemp(dir, ".switchboard-write-check-*")
	if err != nil {
		return fmt.Errorf("%s: the directory %s is not writable by this user (uid %d): %v: fix its owner or mode, or choose another",
			s.label(), dir, os.Geteuid(), unwrapPathError(err))
	}
	_ = probe.Close()
	_ = os.Remove(probe.Name())
	if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
		_ = f.Close()
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: cannot open the database file %s for writing (uid %d): %v: fix its owner or mode",
			s.label(), path, os.Geteuid(), unwrapPathError(err))
	}
	return nil
}

// unwrapPathError keeps an *os.PathError's reason: the message names the path already.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// migrateCommand is `switchboard migrate` and `switchboard migrate status`.
func (a *app) migrateCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations",
		Long: `Apply every pending database migration in one transaction. serve does this at start
unless SWITCHBOARD_AUTO_MIGRATE=false; on PostgreSQL an advisory lock keeps instances that
start together from migrating twice. Read CHANGELOG.md before upgrading.`,
		Example: "  switchboard migrate\n  switchboard migrate status --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd, false, func(ctx context.Context, st *store.Store) error {
				applied, err := st.Migrate(ctx)
				if err != nil {
					return err
				}
				return a.print(map[string]any{"applied": applied}, func(w io.Writer) {
					if len(applied) == 0 {
						fmt.Fprintln(w, "database is up to date")
					}
					for _, m := range applied {
						fmt.Fprintf(w, "applied %d: %s\n", m.Version, m.Name)
					}
				})
			})
		},
	}
	status := &cobra.Command{
		Use:     "status",
		Short:   "List the migrations, applied and pending, without changing anything",
		Example: "  switchboard migrate status\n  switchboard migrate status --json | jq '[.migrations[] | select(.applied_at == null)] | length'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd, false, func(ctx context.Context, st *store.Store) error {
				ms, err := st.MigrationStatus(ctx)
				if err != nil {
					return err
				}
				pending, unknown := 0, 0
				for _, m := range ms {
					if m.AppliedAt == nil {
						pending++
					}
					if m.Unknown {
						unknown++
					}
				}
				return a.print(map[string]any{"migrations": ms, "pending": pending, "schema_version": store.SchemaVersion()},
					func(w io.Writer) {
						tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
						fmt.Fprintln(tw, "VERSION\tNAME\tAPPLIED")
						for _, m := range ms {
							at := "pending"
							if m.AppliedAt != nil {
								at = m.AppliedAt.UTC().Format(time.RFC3339)
							}
							if m.Unknown {
								at += " (by a newer release)"
							}
							fmt.Fprintf(tw, "%d\t%s\t%s\n", m.Version, m.Name, at)
						}
						_ = tw.Flush()
						switch {
						case unknown > 0:
							fmt.Fprintf(w, "the database has %d migrations this binary does not know: it was upgraded by a newer release\n", unknown)
						case pending == 0:
							fmt.Fprintln(w, "database is up to date")
						default:
							fmt.Fprintf(w, "%d pending: run 'switchboard migrate' (serve does it at start unless SWITCHBOARD_AUTO_MIGRATE=false)\n", pending)
						}
					})
			})
		},
	}
	c.AddCommand(status)
	return c
}

// backupCommand is `switchboard backup --to FILE`.
func (a *app) backupCommand() *cobra.Command {
	var to string
	c := &cobra.Command{
		Use:   "backup --to FILE",
		Short: "Copy a SQLite database to a file while it is in use",
		Long: `Copy a SQLite database, consistently and while servers use it, to a new file (SQLite's
VACUUM INTO). Attachments and recordings are rows of the database, so the copy holds them. To
restore, stop the servers and put the copy in place of the database file.

PostgreSQL is backed up with pg_dump: see the README's Backups section.`,
		Example: "  switchboard backup --to /var/backups/switchboard-$(date +%F).db",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return errors.New("backup: --to is required: the file to write, which must not exist")
			}
			return a.withStore(cmd, false, func(ctx context.Context, st *store.Store) error {
				abs, err := filepath.Abs(to)
				if err != nil {
					return err
				}
				start := time.Now()
				if err := st.Backup(ctx, abs); errors.Is(err, store.ErrBackupUnsupported) {
					return errors.New("backup: the database is PostgreSQL: back it up with pg_dump (see the README's Backups section)")
				} else if err != nil {
					return err
				}
				info, err := os.Stat(abs)
				if err != nil {
					return err
				}
				return a.print(map[string]any{"file": abs, "bytes": info.Size(), "duration_ms": time.Since(start).Milliseconds()},
					func(w io.Writer) { fmt.Fprintf(w, "backed up to %s (%d bytes)\n", abs, info.Size()) })
			})
		},
	}
	c.Flags().StringVar(&to, "to", "", "the file to write (required; must not exist)")
	return c
}
