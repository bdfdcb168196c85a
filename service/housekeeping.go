package service

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

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

// housekeeping returns the periodic jobs that keep the database tidy.
func housekeeping() []*river.PeriodicJob {
	return []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
			func() (river.JobArgs, *river.InsertOpts) { return purgeArgs{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true}),
	}
}
