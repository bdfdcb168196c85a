package store

import (
	"context"

	"github.com/riverqueue/river"
)

// InsertJobWithID is insertJobWithID (the carrier simulator's job insert), for river_test.go.
func (s *Store) InsertJobWithID(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (int64, error) {
	return s.insertJobWithID(ctx, args, opts)
}

// DeleteWaitingJob is deleteWaitingJob, for river_test.go.
func (s *Store) DeleteWaitingJob(ctx context.Context, id int64) error {
	return s.deleteWaitingJob(ctx, id)
}
