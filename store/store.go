package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
)

// Dialect names the SQL database behind a Store.
type Dialect string

// The supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Errors the store returns; callers test them with errors.Is.
var (
	// ErrNotFound means the row does not exist or belongs to another project.
	ErrNotFound = errors.New("store: not found")
	// ErrDuplicate means a unique constraint refused the write.
	ErrDuplicate = errors.New("store: duplicate")
	// ErrUnavailable means the database cannot be reached right now: the connection was refused
	// or lost, or the server is starting up, shutting down or full. The same request may work
	// in a moment. Test it with Unavailable, which also knows the drivers' own errors.
	ErrUnavailable = errors.New("store: database unavailable")
)

// Unavailable reports whether err says that the database cannot be reached right now (see
// ErrUnavailable), as opposed to a failure that retrying would repeat. It knows the errors of
// both drivers, whether or not translate has wrapped them:
//   - PostgreSQL's connection exceptions (SQLSTATE class 08), admin_shutdown (57P01, also the
//     answer to pg_terminate_backend), crash_shutdown (57P02), cannot_connect_now (57P03,
//     "the database system is starting up / shutting down") and too_many_connections (53300);
//   - a connection pgx could not make, or lost (refused, reset, closed, cut off mid-answer);
//   - database/sql's bad and finished connections;
//   - SQLite's busy and locked, once its busy timeout has run out.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", pgErr.Code == "53300":
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var sqliteErr interface{ Code() int }
	if errors.As(err, &sqliteErr) {
		switch sqliteErr.Code() & 0xff {
		case sqliteBusy, sqliteLocked:
			return true
		}
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) ||
		pgconn.SafeToRetry(err)
}

// SQLite's primary result codes for a database held by another connection.
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)

// CursorError reports a pagination cursor that this store did not issue, or cursors that
// cannot be used together.
type CursorError struct {
	// Param is the query parameter at fault ("after" or "before").
	Param string
	// Reason says what is wrong; empty means "not a cursor this API issued".
	Reason string
}

func (e *CursorError) Error() string { return "store: invalid cursor in " + e.Param }

// Config says how to open a Store.
type Config struct {
	// URL is a postgres:// (or postgresql://) URL for PostgreSQL, or a SQLite file path, optionally
	// prefixed with sqlite: (or sqlite://). Required.
	URL string
	// MaxOpenConns caps the connection pool. Defaults to 40 on PostgreSQL and 8 on SQLite.
	MaxOpenConns int
	// Logger receives the job queue's warnings and the slow-query log. Defaults to slog.Default().
	Logger *slog.Logger
	// SlowQuery is how long a statement may take before it is logged (at warn, without its
	// arguments). Defaults to 500ms; negative logs none.
	SlowQuery time.Duration
}

// Store is the database handle shared by the API and the operator commands.
type Store struct {
	db      *gorm.DB
	dialect Dialect
	log     *slog.Logger
	// queueDriver and jobs are the job queue's driver and insert-only client (see jobs.go).
	queueDriver riverdriver.Driver[*sql.Tx]
	jobs        *river.Client[*sql.Tx]
	// wakes are the wake-ups of this process's dispatchers (wake.go); inside Tx, woken collects
	// the channels to wake once the transaction commits.
	wakes *wakeups
	woken *[]string
	// authListen holds the LISTEN of API key changes (authnotify.go); shared by the
	// transactions' copies.
	authListen *authListener
	// onCommit, inside Tx, collects what to run once the transaction has committed.
	onCommit *[]func()
	// cfg is how the store was opened (OpenAgain).
	cfg Config
	// tidy vacuums the outbound queue as rows leave it (queue_tidy.go); shared by the copies.
	tidy *queueTidier
	// pin, in a pinned store (pinned.go), is the connection its pgx statements run on.
	pin *pinnedConn
	// apiLogStmts are the prepared INSERTs of API logs on SQLite (apilogs.go); shared by the copies.
	apiLogStmts *sqlStmts
}

// Open connects to the database named by cfg.URL. It does not migrate; call Migrate.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.URL == "" {
		return nil, errors.New("store: database URL is empty")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	slow := cfg.SlowQuery
	if slow == 0 {
		slow = 500 * time.Millisecond
	}
	gcfg := &gorm.Config{
		Logger:                 slowQueryLog{log: log, threshold: slow},
		NowFunc:                func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
		SkipDefaultTransaction: true,
		PrepareStmt:            false,
		TranslateError:         true,
	}
	var (
		db      *gorm.DB
		err     error
		dialect Dialect
		maxOpen = cfg.MaxOpenConns
	)
	if strings.HasPrefix(cfg.URL, "postgres://") || strings.HasPrefix(cfg.URL, "postgresql://") {
		dialect = Postgres
		// pgx already prepares and caches every statement per connection; gorm's own prepared
		// statements would prepare and close them again inside every transaction.
		// Every connection encodes the hot paths' arrays itself (registerFastArrays).
		db, err = gorm.Open(postgres.New(postgres.Config{DSN: cfg.URL,
			OptionOpenDB: []stdlib.OptionOpenDB{stdlib.OptionAfterConnect(registerFastArrays)}}), gcfg)
		if maxOpen == 0 {
			maxOpen = 40
		}
	} else {
		dialect = SQLite
		path := strings.TrimPrefix(strings.TrimPrefix(cfg.URL, "sqlite:"), "//")
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("store: create database directory: %w", err)
			}
		}
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", "foreign_keys(ON)")
		q.Set("_txlock", "immediate")
		db, err = gorm.Open(sqlite.Open("file:"+path+"?"+q.Encode()), gcfg)
		if maxOpen == 0 {
			maxOpen = 8
		}
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s database: %w", dialect, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("store: database handle: %w", err)
	}
	sqlDB.SetMaxOpenConns(maxOpen)
	sqlDB.SetMaxIdleConns(maxOpen)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("store: ping %s database: %w", dialect, err)
	}
	st := &Store{db: db, dialect: dialect, log: log, queueDriver: newQueueDriver(sqlDB, dialect), wakes: newWakeups(),
		authListen: &authListener{}, cfg: cfg, tidy: &queueTidier{pool: sqlDB}, apiLogStmts: &sqlStmts{}}
	if st.jobs, err = river.NewClient(st.queueDriver, &river.Config{Logger: quietLogger(log)}); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("store: job queue client: %w", err)
	}
	return st, nil
}

// Dialect reports which database the store talks to.
func (s *Store) Dialect() Dialect { return s.dialect }

// DB exposes the gorm handle for packages that share its transactions (the job queue).
func (s *Store) DB() *gorm.DB { return s.db }

// Ping checks that the database answers; /readyz uses it.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// Close releases the connection pool.
func (s *Store) Close() error {
	s.authListen.close()
	s.wakes.close()
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// Tx runs fn in one transaction: committed when fn returns nil, rolled back otherwise. The
// wake-ups of what fn wrote, and what its writes must announce (afterCommit), go out once it is
// committed.
func (s *Store) Tx(ctx context.Context, fn func(tx *Store) error) error {
	if s.inTx() {
		return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			c := *s
			c.db = tx
			return fn(&c)
		})
	}
	var (
		woken []string
		hooks []func()
	)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		c := *s
		c.db, c.woken, c.onCommit = tx, &woken, &hooks
		return fn(&c)
	})
	if err == nil {
		for _, ch := range uniq(woken) {
			s.wake(ch)
		}
		for _, h := range hooks {
			h()
		}
	}
	return err
}

// afterCommit runs fn once the caller's transaction has committed (never if it rolls back), or at
// once outside a transaction.
func (s *Store) afterCommit(fn func()) {
	if s.onCommit != nil {
		*s.onCommit = append(*s.onCommit, fn)
		return
	}
	fn()
}

func (s *Store) q(ctx context.Context) *gorm.DB { return s.db.WithContext(ctx) }

// scan runs tx's query and scans its rows into dest, as gorm's Scan does, but without the
// statement text gorm's Scan renders for its logger on every call (every argument inlined by
// regular expressions, logged or not): that cost about 5% of the CPU on the event path. tx is a
// query being built (Raw, Table, Where…), whose instance then holds Error and RowsAffected.
func scan(tx *gorm.DB, dest any) *gorm.DB {
	rows, err := tx.Rows()
	if err != nil {
		return tx
	}
	if rows.Next() {
		_ = tx.ScanRows(rows, dest)
	} else {
		tx.RowsAffected = 0
		_ = tx.AddError(rows.Err())
	}
	_ = tx.AddError(rows.Close())
	return tx
}

// translate maps gorm's errors to the store's.
func translate(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound):
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	case errors.Is(err, gorm.ErrDuplicatedKey), isUniqueViolation(err):
		return fmt.Errorf("%s: %w", what, ErrDuplicate)
	case Unavailable(err):
		return fmt.Errorf("store: %s: %w: %w", what, ErrUnavailable, err)
	default:
		return fmt.Errorf("store: %s: %w", what, err)
	}
}

func isUniqueViolation(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "UNIQUE constraint failed") || strings.Contains(msg, "SQLSTATE 23505")
}
