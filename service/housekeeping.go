package service

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/switchboard/switchboard/store"
)

// IdempotencyTTL is how long an Idempotency-Key's response is kept and replayed.
const IdempotencyTTL = 24 * time.Hour

// purgeArgs is the periodic job that deletes idempotency records past their TTL.
type purgeArgs struct{}

// Kind names the job.
func (purgeArgs) Kind() string { return "purge_idempotency_keys" }

type purgeWorker struct {
	river.WorkerDefaults[purgeArgs]
	store *store.Store
	now   func() time.Time
	log   *slog.Logger
}

func (w *purgeWorker) Work(ctx context.Context, _ *river.Job[purgeArgs]) error {
	n, err := w.store.PurgeIdempotencyKeys(ctx, w.now().Add(-IdempotencyTTL))
	if err != nil {
		return err
	}
	if n > 0 {
		w.log.Info("purged expired idempotency keys", "count", n)
	}
	return nil
}

// DefaultRetention is how long records are kept unless configured: API logs and succeeded
// webhook deliveries 30 days, events (with their remaining deliveries) 90 days.
var DefaultRetention = store.Retention{APILogs: 30 * 24 * time.Hour, WebhookDeliveries: 30 * 24 * time.Hour,
	Events: 90 * 24 * time.Hour}

// retentionArgs is the periodic job that deletes what is older than the retention allows.
type retentionArgs struct{}

// Kind names the job.
func (retentionArgs) Kind() string { return "prune_retention" }

// InsertOpts keeps one pruning job at a time: the leader inserts it every PruneInterval, and a
// run still going (or waiting) makes the next insert a no-op.
func (retentionArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByState: []rivertype.JobState{rivertype.JobStateAvailable,
		rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}}}
}

type retentionWorker struct {
	river.WorkerDefaults[retentionArgs]
	store     *store.Store
	retention store.Retention
	now       func() time.Time
	log       *slog.Logger
}

func (w *retentionWorker) Work(ctx context.Context, _ *river.Job[retentionArgs]) error {
	n, err := w.store.Prune(ctx, w.retention, w.now(), store.PruneLimits{})
	if n != (store.Pruned{}) {
		w.log.Info("pruned records past their retention", "api_logs", n.APILogs, "webhook_deliveries", n.WebhookDeliveries,
			"events", n.Events, "console_sessions", n.ConsoleSessions)
	}
	return err
}

// PruneInterval is how often the leading instance prunes records past their retention.
const PruneInterval = 10 * time.Minute

// housekeeping returns the periodic jobs that keep the database tidy. River's leader (one
// instance at a time) inserts them.
func housekeeping() []*river.PeriodicJob {
	return []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
			func() (river.JobArgs, *river.InsertOpts) { return purgeArgs{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true}),
		river.NewPeriodicJob(river.PeriodicInterval(PruneInterval),
			func() (river.JobArgs, *river.InsertOpts) { return retentionArgs{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true}),
	}
}
