package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"gorm.io/gorm"
)

// The job queue is River, in the store's own database, so that a job is inserted in the same
// transaction as the data it acts on: work is never lost when a transaction commits and never
// starts when it rolls back. Both dialects use database/sql drivers, whose transaction type is
// *sql.Tx, which is also what gorm's transactions wrap.

func newQueueDriver(db *sql.DB, dialect Dialect) riverdriver.Driver[*sql.Tx] {
	if dialect == Postgres {
		return riverdatabasesql.New(db)
	}
	return riversqlite.New(db)
}

// migrateQueue applies River's own migrations.
func (s *Store) migrateQueue(ctx context.Context) error {
	m, err := rivermigrate.New(s.queueDriver, &rivermigrate.Config{Logger: quietLogger(s.log)})
	if err != nil {
		return fmt.Errorf("store: job queue migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("store: migrate job queue: %w", err)
	}
	return nil
}

func quietLogger(l *slog.Logger) *slog.Logger {
	return slog.New(levelFilter{Handler: l.Handler(), min: slog.LevelWarn})
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

// sqlConn is what runs db's statements in database/sql: its transaction inside Tx, else the
// connection pool (nil for any other pool).
func sqlConn(db *gorm.DB) interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
} {
	if tx := sqlTx(db); tx != nil {
		return tx
	}
	if p, ok := db.Statement.ConnPool.(*sql.DB); ok {
		return p
	}
	return nil
}

// sqlTx returns the database/sql transaction behind a gorm handle, or nil outside a transaction.
func sqlTx(db *gorm.DB) *sql.Tx {
	switch p := db.Statement.ConnPool.(type) {
	case *sql.Tx:
		return p
	case *gorm.PreparedStmtTX:
		if tx, ok := p.Tx.(*sql.Tx); ok {
			return tx
		}
	}
	return nil
}

// InsertJob enqueues a job. Inside Tx it joins the transaction: the job exists if and only if
// the transaction commits.
func (s *Store) InsertJob(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error {
	return s.InsertJobs(ctx, []river.InsertManyParams{{Args: args, InsertOpts: opts}})
}

// InsertJobs enqueues many jobs at once, inside the current transaction if there is one.
func (s *Store) InsertJobs(ctx context.Context, params []river.InsertManyParams) error {
	if len(params) == 0 {
		return nil
	}
	if s.dialect == Postgres {
		if rows, ok := plainJobs(params, time.Now()); ok {
			return s.insertPlainJobs(ctx, rows)
		}
	}
	var err error
	if tx := sqlTx(s.db); tx != nil {
		_, err = s.jobs.InsertManyFastTx(ctx, tx, params)
	} else {
		_, err = s.jobs.InsertManyFast(ctx, params)
	}
	if err != nil {
		return fmt.Errorf("store: insert %d jobs: %w", len(params), err)
	}
	return nil
}

// WorkerConfig configures the job workers of one instance.
type WorkerConfig struct {
	// Workers are the registered job handlers. Required.
	Workers *river.Workers
	// Queues maps queue names to their concurrency. Defaults to the default queue with 50 workers.
	Queues map[string]river.QueueConfig
	// PollInterval is how often idle workers look for new jobs. Defaults to 100 ms on PostgreSQL
	// and 50 ms on SQLite.
	PollInterval time.Duration
	// PeriodicJobs are inserted on their schedule by whichever instance leads.
	PeriodicJobs []*river.PeriodicJob
	// Logger defaults to the store's logger, warnings and above.
	Logger *slog.Logger
	// RescueStuckJobsAfter is how long a job may stay running before the leader makes it
	// available again (its worker presumably died with its process). Defaults to River's 1 hour.
	RescueStuckJobsAfter time.Duration
	// FinishedJobRetention is how long completed and cancelled jobs are kept before the
	// leader's cleaner deletes them; failed (discarded) jobs are kept a week. Defaults to 1 hour;
	// negative keeps them forever.
	FinishedJobRetention time.Duration
}

// StartWorkers starts working jobs in the background; stop them with the returned client's Stop.
func (s *Store) StartWorkers(ctx context.Context, cfg WorkerConfig) (*river.Client[*sql.Tx], error) {
	if cfg.Workers == nil {
		return nil, errors.New("store: StartWorkers needs Workers")
	}
	if cfg.Queues == nil {
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 50}}
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 100 * time.Millisecond
		if s.dialect == SQLite {
			cfg.PollInterval = 50 * time.Millisecond
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger(s.log)
	}
	finished := cfg.FinishedJobRetention
	switch {
	case finished == 0:
		finished = time.Hour
	case finished < 0:
		finished = -1 // River's "forever"
	}
	c, err := river.NewClient(s.queueDriver, &river.Config{
		Workers:              cfg.Workers,
		Queues:               cfg.Queues,
		FetchCooldown:        min(cfg.PollInterval, 100*time.Millisecond),
		FetchPollInterval:    cfg.PollInterval,
		Logger:               cfg.Logger,
		JobTimeout:           -1,
		RescueStuckJobsAfter: cfg.RescueStuckJobsAfter,
		PeriodicJobs:         cfg.PeriodicJobs,
		// Nothing reads completed jobs (each one's outcome is in the rows it changed), and every
		// message leaves at least one: an hour keeps the table and its indexes small at high
		// throughput instead of River's default day.
		CompletedJobRetentionPeriod: finished,
		CancelledJobRetentionPeriod: finished,
	})
	if err != nil {
		return nil, fmt.Errorf("store: job client: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("store: start workers: %w", err)
	}
	return c, nil
}
