package store

import (
	"context"
	"database/sql"
	"sync/atomic"
	"time"
)

// Tidying the outbound queue (PostgreSQL). Every message leaves outbound_queue by a delete, and
// until VACUUM removes them the deleted rows keep their entries in outbound_queue_due, at the head
// of the index that every claim walks in due order, so each claim reads past all of them: measured
// on PostgreSQL 15, a claim of 20 rows behind 30,000 deleted ones read 468 pages in 1.6 ms, and 45
// pages in 0.08 ms once the table was vacuumed. Autovacuum visits a database at most once per
// autovacuum_naptime (a minute by default), while at full load 2,000 rows a second leave the
// queue, so the store vacuums the queue itself once tidyOutboundEvery rows have left it since the
// last time: one VACUUM at a time per process, SKIP_LOCKED so that an instance never waits behind
// another's. The queue holds only the messages still to send, so each VACUUM is small.

// tidyOutboundEvery is how many rows leave the outbound queue between two VACUUMs of it.
var tidyOutboundEvery int64 = 2000

// queueTidier counts the rows that left the outbound queue; shared by a Store's copies.
type queueTidier struct {
	pool    *sql.DB
	left    atomic.Int64
	running atomic.Bool
	// done counts the VACUUMs run (for specs).
	done atomic.Int64
}

// leftOutbound notes that n rows left the outbound queue, and vacuums it in the background (after
// the caller's transaction commits) when enough have since the last time.
func (s *Store) leftOutbound(n int) {
	t := s.tidy
	if s.dialect != Postgres || t == nil || t.left.Add(int64(n)) < tidyOutboundEvery {
		return
	}
	s.afterCommit(func() {
		if !t.running.CompareAndSwap(false, true) {
			return
		}
		t.left.Store(0)
		go func() {
			defer t.running.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := t.pool.ExecContext(ctx, `VACUUM (SKIP_LOCKED, INDEX_CLEANUP ON, TRUNCATE false) outbound_queue`); err != nil {
				s.log.Debug("store: vacuum the outbound queue", "err", err)
				return
			}
			t.done.Add(1)
		}()
	})
}
