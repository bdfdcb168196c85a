package store

import (
	"context"

	"github.com/riverqueue/river"
)

// SetTidyOutboundEvery changes how many rows leave the outbound queue between two VACUUMs of it,
// for a spec; it returns the function that restores the setting.
func SetTidyOutboundEvery(n int64) (restore func()) {
	was := tidyOutboundEvery
	tidyOutboundEvery = n
	return func() { tidyOutboundEvery = was }
}

// OutboundVacuums counts the VACUUMs of the outbound queue this store has run.
func (s *Store) OutboundVacuums() int64 { return s.tidy.done.Load() }

// InsertJobWithID is insertJobWithID (the carrier simulator's job insert), for river_test.go.
func (s *Store) InsertJobWithID(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (int64, error) {
	return s.insertJobWithID(ctx, args, opts)
}

// DeleteWaitingJob is deleteWaitingJob, for river_test.go.
func (s *Store) DeleteWaitingJob(ctx context.Context, id int64) error {
	return s.deleteWaitingJob(ctx, id)
}
