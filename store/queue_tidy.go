package store

import (
	"context"
	"database/sql"
	"sync/atomic"
	"time"
)

// Tidying the queues (PostgreSQL). Every row leaves outbound_queue and webhook_queue by a delete,
// and until VACUUM removes them the deleted rows keep their entries in the queue's due index, at
// the head of the index that every claim walks in due order, so each claim reads past all of them:
// measured on PostgreSQL 15, a claim of 20 rows behind 30,000 deleted ones read 468 pages in
// 1.6 ms, and 45 pages in 0.08 ms once the table was vacuumed. Autovacuum visits a database at
// most once per autovacuum_naptime (a minute by default), while at full load 2,000 rows a second
// leave each queue, so the store vacuums a queue itself: one VACUUM of a queue at a time per
// process, SKIP_LOCKED so that an instance never waits behind another's. A queue holds only the
// work still to do, so each VACUUM is small.
//
// Each VACUUM also makes PostgreSQL drop every cached plan of every statement that reads or writes
// the queue, on every connection (it rewrites the table's pg_class row: its pages and tuples), and
// those statements are the pipeline's largest (the send, the claims, the records of outcomes, the
// events' fan-out), each planned again on each connection that runs it next: about 9 ms of
// PostgreSQL's planning per VACUUM in an e2e run, where the VACUUM itself takes 1 ms. The dead
// entries cost the claims little in between, as each index scan that passes a deleted row's entry
// marks it dead once no snapshot can see the row, and the scans after it skip it without reading
// the row (a claim of 150 rows read 210 buffers behind 2,000 deleted rows, 235 behind 20,000). So
// the outbound queue is vacuumed once tidyQueueEvery rows have left it since the last time and
// tidyQueueInterval has passed: under load, once per interval rather than every 2,000 rows. The
// webhook queue is vacuumed the same way: its statements find their rows by the due index or by
// ctid (the record of webhook outcomes by the ctids its claim returned, recordLocatedCTEs), not by
// a join on delivery id, whose generic plan, made while the queue was small, could be a hash join
// over a sequential scan of the whole table (3.8-9.8 ms a call in e2e runs with a VACUUM every
// 5 s, against 1.2). On a queue of fewer than about 50 pages (the first 1,500 rows) the plans of
// the claims and the record scan the table, as any plan of a table that small would: the first
// VACUUM, once 2,000 rows have left, waits for no interval, and the plans made after it find
// their rows by ctid.

// tidyQueueEvery is how many rows leave a queue, at least, between two VACUUMs of it.
var tidyQueueEvery int64 = 2000

// tidyQueueInterval is the least time between the starts of two VACUUMs of a queue.
var tidyQueueInterval = 5 * time.Second

// queueTidier counts the rows that left the queues; shared by a Store's copies.
type queueTidier struct {
	pool     *sql.DB
	outbound queueTidy
	webhooks queueTidy
}

// queueTidy counts the rows that left one queue since its last VACUUM.
type queueTidy struct {
	left    atomic.Int64
	running atomic.Bool
	// last is when the last VACUUM started (Unix nanoseconds).
	last atomic.Int64
	// done counts the VACUUMs run (for specs).
	done atomic.Int64
}

// leftOutbound notes that n rows left the outbound queue, and vacuums it in the background (after
// the caller's transaction commits) when enough have since the last time, and long enough ago.
func (s *Store) leftOutbound(n int) {
	if t := s.tidy; t != nil {
		s.leftQueue(&t.outbound, "outbound_queue", n)
	}
}

// leftWebhooks is leftOutbound for webhook_queue.
func (s *Store) leftWebhooks(n int) {
	if t := s.tidy; t != nil {
		s.leftQueue(&t.webhooks, "webhook_queue", n)
	}
}

func (s *Store) leftQueue(q *queueTidy, table string, n int) {
	if s.dialect != Postgres || n <= 0 || q.left.Add(int64(n)) < tidyQueueEvery ||
		time.Since(time.Unix(0, q.last.Load())) < tidyQueueInterval {
		return
	}
	pool := s.tidy.pool
	s.afterCommit(func() {
		if !q.running.CompareAndSwap(false, true) {
			return
		}
		q.left.Store(0)
		q.last.Store(time.Now().UnixNano())
		go func() {
			defer q.running.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := pool.ExecContext(ctx, `VACUUM (SKIP_LOCKED, INDEX_CLEANUP ON, TRUNCATE false) `+table); err != nil {
				s.log.Debug("store: vacuum a queue", "table", table, "err", err)
				return
			}
			q.done.Add(1)
		}()
	})
}
