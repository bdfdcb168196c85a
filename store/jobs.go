package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
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

// insertJobWithID enqueues one job inside the transaction tx and returns its id.
func (s *Store) insertJobWithID(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (int64, error) {
	tx := sqlTx(s.db)
	if tx == nil {
		return 0, errors.New("store: insertJobWithID needs a transaction")
	}
	if s.dialect == Postgres {
		if rows, ok := plainJobs([]river.InsertManyParams{{Args: args, InsertOpts: opts}}, time.Now()); ok {
			var sb strings.Builder
			qargs := appendPlainJobs(&sb, nil, rows, true)
			var id int64
			if err := tx.QueryRowContext(ctx, sb.String()+" RETURNING id", qargs...).Scan(&id); err != nil {
				return 0, fmt.Errorf("store: insert job: %w", err)
			}
			return id, nil
		}
	}
	res, err := s.jobs.InsertTx(ctx, tx, args, opts)
	if err != nil {
		return 0, fmt.Errorf("store: insert job: %w", err)
	}
	return res.Job.ID, nil
}

// deleteWaitingJob deletes a job that is scheduled or available, not yet running.
func (s *Store) deleteWaitingJob(ctx context.Context, id int64) error {
	err := s.q(ctx).Exec(`DELETE FROM river_job WHERE id = ? AND state IN ('scheduled', 'available')`, id).Error
	return translate(err, "delete job")
}

// plainJob is a row of river_job as River's insert writes it for a job without unique options,
// tags or metadata.
type plainJob struct {
	args        []byte
	kind, queue string
	maxAttempts int
	priority    int
	scheduledAt time.Time
	state       rivertype.JobState
}

// plainJobs resolves jobs' options as River does (the insert's options, then the args' own,
// then River's defaults), or reports false when one needs River's own insert: unique options,
// tags or metadata. A job scheduled at or before now is available at once.
func plainJobs(params []river.InsertManyParams, now time.Time) ([]plainJob, bool) {
	out := make([]plainJob, len(params))
	for i, p := range params {
		opts := river.InsertOpts{}
		if p.InsertOpts != nil {
			opts = *p.InsertOpts
		}
		var own river.InsertOpts
		if a, ok := p.Args.(river.JobArgsWithInsertOpts); ok {
			own = a.InsertOpts()
		}
		if opts.Tags != nil || own.Tags != nil || len(opts.Metadata) > 0 || unique(opts.UniqueOpts) || unique(own.UniqueOpts) {
			return nil, false
		}
		b, err := json.Marshal(p.Args)
		if err != nil {
			return nil, false // River's insert reports it
		}
		j := plainJob{args: b, kind: p.Args.Kind(), queue: cmp.Or(opts.Queue, own.Queue, river.QueueDefault),
			maxAttempts: cmp.Or(opts.MaxAttempts, own.MaxAttempts, river.MaxAttemptsDefault),
			priority:    cmp.Or(opts.Priority, own.Priority, river.PriorityDefault),
			scheduledAt: cmp.Or(opts.ScheduledAt, own.ScheduledAt, now), state: rivertype.JobStateAvailable}
		if j.priority < 1 || j.priority > 4 || j.kind == "" {
			return nil, false
		}
		if j.scheduledAt.After(now) {
			j.state = rivertype.JobStateScheduled
		}
		out[i] = j
	}
	return out, true
}

func unique(o river.UniqueOpts) bool {
	return o.ByArgs || o.ByPeriod != 0 || o.ByQueue || o.ByState != nil || o.ExcludeKind
}

// insertPlainJobs writes jobs into River's table with one plain multi-row INSERT, the statement
// River's other-language clients use too: River's own insert through database/sql encodes each
// of its thirteen array parameters as text, which costs more than the rest of a send.
func (s *Store) insertPlainJobs(ctx context.Context, jobs []plainJob) error {
	const perStatement = 5000 // 7 parameters each, under PostgreSQL's 65,535
	for len(jobs) > 0 {
		n := min(len(jobs), perStatement)
		var sb strings.Builder
		args := appendPlainJobs(&sb, make([]any, 0, 7*n), jobs[:n], false)
		if err := s.q(ctx).Exec(sb.String(), args...).Error; err != nil {
			return fmt.Errorf("store: insert %d jobs: %w", n, err)
		}
		jobs = jobs[n:]
	}
	return nil
}

// plainJobCasts are the casts of appendPlainJobs' parameters, in its column order.
var plainJobCasts = [7]string{"::jsonb", "", "", "", "", "", "::river_job_state"}

// appendPlainJobs writes the INSERT of jobs into sb and returns args with its parameters: gorm's
// ? placeholders, or $n when numbered (n counting on from the parameters already in args).
func appendPlainJobs(sb *strings.Builder, args []any, jobs []plainJob, numbered bool) []any {
	sb.WriteString("INSERT INTO river_job (args, kind, max_attempts, priority, queue, scheduled_at, state) VALUES ")
	for i, j := range jobs {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(")
		for k, v := range [7]any{string(j.args), j.kind, j.maxAttempts, j.priority, j.queue, j.scheduledAt.UTC(), string(j.state)} {
			if k > 0 {
				sb.WriteString(", ")
			}
			if numbered {
				sb.WriteString("$" + strconv.Itoa(len(args)+1))
			} else {
				sb.WriteString("?")
			}
			sb.WriteString(plainJobCasts[k])
			args = append(args, v)
		}
		sb.WriteString(")")
	}
	return args
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
