package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// The pending webhook deliveries have their own queue, webhook_queue (as outbound messages have
// outbound_queue): a row per delivery that still has an attempt to make, written with the
// delivery (InsertWebhookDeliveries, and the fan-out of events in eventsFanout), due at due_at
// unless a claim leases it. The row names the delivery's endpoint and event and counts its
// attempts, so that a claim on PostgreSQL does not look the delivery up. A deliverer claims due
// rows in batches, with their endpoints and events: the claim leases them until the end of a
// lease (leased_until), so that a deliverer that dies mid-attempt leaves the delivery to be
// attempted again once the lease is over (deliveries are at least once). No index covers
// leased_until, so on PostgreSQL the claim's update is heap-only. The outcomes of a batch of
// attempts are recorded in one statement, which takes the ended deliveries out of the queue and
// makes a retried one due at its next attempt; with no index on the delivery's status, its update
// can be heap-only too. The queue holds only the deliveries still to make, and the store vacuums
// it once enough rows have left it (queue_tidy.go), so that a claim does not read past the index
// entries of deliveries that ended. The delivery keeps its next_attempt_at for the API to show.

// ClaimDeliveries claims up to limit due pending deliveries, oldest due first, for lease, and
// returns them with their endpoints and events in delivery id order. On PostgreSQL it is one
// statement, and a delivery that concurrent claims (of this or another instance) find due goes to
// one of them.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, limit int, lease time.Duration) ([]DeliveryWork, error) {
	return s.RecordAndClaimDeliveries(ctx, nil, now, limit, lease)
}

// RecordAndClaimDeliveries records the outcomes outs at now as RecordDeliveries does, then claims
// as ClaimDeliveries does (nothing when limit is 0). On PostgreSQL outside a transaction it is one
// statement, and so one commit: a deliverer records the attempts that ended with its next claim.
func (s *Store) RecordAndClaimDeliveries(ctx context.Context, outs []DeliveryOutcome, now time.Time, limit int, lease time.Duration) ([]DeliveryWork, error) {
	now = now.UTC()
	if limit <= 0 {
		return nil, s.RecordDeliveries(ctx, outs, now)
	}
	if s.dialect != Postgres || s.inTx() {
		var out []DeliveryWork
		// The claim comes first, as on PostgreSQL, where it sees the queue as it was before the
		// outcomes: a retry recorded here is not claimed by the same call.
		err := s.Tx(ctx, func(tx *Store) error {
			var ids []string
			if err := tx.q(ctx).Raw(`SELECT delivery_id FROM webhook_queue WHERE due_at <= ? AND `+notLeased+`
				ORDER BY due_at LIMIT ?`, now, now, limit).Scan(&ids).Error; err != nil {
				return translate(err, "claim webhook deliveries")
			}
			if len(ids) == 0 {
				return tx.RecordDeliveries(ctx, outs, now)
			}
			if err := tx.q(ctx).Exec(`UPDATE webhook_queue SET leased_until = ? WHERE delivery_id IN ?`, now.Add(lease), ids).Error; err != nil {
				return translate(err, "lease webhook deliveries")
			}
			works, err := tx.DeliveryWorks(ctx, ids)
			if err != nil {
				return err
			}
			for _, id := range uniq(ids) {
				if w := works[id]; w != nil {
					out = append(out, *w)
				}
			}
			return tx.RecordDeliveries(ctx, outs, now)
		})
		return out, err
	}
	// The lease is one update, which finds the due rows by the ctids of a plain select (a TID scan:
	// one page read each, rather than an index walk). It locks no row first: a FOR UPDATE SKIP
	// LOCKED select wrote a WAL record for each row's lock before the update wrote another. A
	// concurrent claim (another instance's) that leased one of the rows first holds this update
	// until it commits; the update then checks the row's new version against its conditions again
	// (READ COMMITTED), finds it leased and leaves it out, so that no delivery is claimed twice.
	// Claims take their rows in ctid order (a TID scan sorts its list), so two cannot deadlock.
	// The re-check is written GREATEST(due_at, leased_until) <= $1 (GREATEST skips a NULL: due and
	// not leased), which no index serves: with the two conditions apart, the generic plan that the
	// statement runs after its fifth execution walked the due index through every due row, leased
	// ones included, and filtered them by ctid, where it now reads the claimed rows by their ctids
	// (EXPLAIN on a queue of 1,000 rows, 40 claimed: 59 buffers and 0.17 ms -> a TID scan).
	// The outcomes' common table expressions come first (recordDeliveriesPG; their rows are leased,
	// so the claim, which sees the table as it was before the statement, leaves them alone).
	var args []any
	q := `WITH `
	if len(outs) > 0 {
		q, args = q+recordDeliveriesPG(4, outs)+`, `, recordDeliveriesArgs(outs, now)
	}
	q += claimDeliveriesPG
	var out []DeliveryWork
	err := s.pgxConn(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, q, append([]any{now, limit, now.Add(lease)}, args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		// The rows of one endpoint (and of one project's account) repeat its text: a column whose
		// text is the previous row's takes that row's string (textInterner).
		var texts textInterner
		var dest []any
		for rows.Next() {
			out = append(out, DeliveryWork{}) // scanned in place
			w := &out[len(out)-1]
			d, e, v := &w.Delivery, &w.Endpoint, &w.Event
			dest = append(dest[:0], &d.ID, &d.Attempts, &e.ID, &e.ProjectID, &e.URL, &e.Secret, &e.PreviousSecret,
				&e.PreviousSecretUntil, &e.Enabled, &e.FailingSince, &v.ID, &v.ProjectID, &v.AccountID, &v.Type, &v.Data,
				&v.CreatedAt, &v.Traceparent, &w.QueueRow.tid)
			if err := texts.scan(rows, dest); err != nil {
				return err
			}
			d.ProjectID, d.EndpointID, d.EventID, d.EventType, d.Status = v.ProjectID, e.ID, v.ID, v.Type, DeliveryPending
			v.CreatedAt = v.CreatedAt.UTC()
		}
		return rows.Err()
	})
	if err != nil {
		return nil, translate(err, "claim webhook deliveries")
	}
	// The ended deliveries left the queue (those that another attempt had not ended first): close
	// enough to count towards the queue's next VACUUM.
	s.leftWebhooks(endedCount(outs))
	return out, nil
}

// claimDeliveriesPG is the claim's part of RecordAndClaimDeliveries' statement on PostgreSQL, from
// its common table expression l on: $1 the time, $2 the limit, $3 the end of the lease.
const claimDeliveriesPG = `l AS (
			UPDATE webhook_queue w SET leased_until = $3
			WHERE w.ctid = ANY (ARRAY(SELECT ctid FROM webhook_queue WHERE due_at <= $1 AND (leased_until IS NULL OR leased_until <= $1)
				ORDER BY due_at LIMIT $2)) AND GREATEST(w.due_at, w.leased_until) <= $1
			RETURNING w.delivery_id, w.attempts, w.endpoint_id, w.event_id, w.ctid
		)
		SELECT l.delivery_id, l.attempts, e.id, e.project_id, e.url, e.secret, e.previous_secret, e.previous_secret_until,
			e.enabled, e.failing_since, ev.id, ev.project_id, ev.account_id, ev.type, ev.data, ev.created_at, ev.traceparent, l.ctid
		FROM l JOIN webhook_endpoints e ON e.id = l.endpoint_id JOIN events ev ON ev.id = l.event_id ORDER BY l.delivery_id`

// DeliveryOutcome is what became of one attempt of a pending delivery.
type DeliveryOutcome struct {
	ID string
	// Attempts is the delivery's attempt count after it (the attempt's number, or the count as it
	// was for a delivery failed without an attempt).
	Attempts int
	// Status is the attempt's HTTP status, 0 without an answer.
	Status int
	// Error says why the attempt failed; nil when it succeeded.
	Error *string
	// State is the delivery's state after it: DeliverySucceeded, DeliveryFailed (no attempt
	// left), or DeliveryPending with NextAttemptAt the retry's time.
	State         string
	NextAttemptAt *time.Time
	// QueueRow is where the claim left the delivery's queue row (DeliveryWork.QueueRow): give it
	// back so that the record finds the row by it (PostgreSQL), rather than by delivery id.
	QueueRow QueueRow
	// AnsweredAt is when the endpoint answered the attempt: a success's delivered_at. Zero: the
	// record's time. Successes are recorded in groups, up to tens of milliseconds after their
	// answers.
	AnsweredAt time.Time
}

// deliveredAt is a success's delivered_at when recorded at at.
func (o *DeliveryOutcome) deliveredAt(at time.Time) time.Time {
	if o.AnsweredAt.IsZero() {
		return at
	}
	return o.AnsweredAt.UTC()
}

// RecordDeliveries records the outcomes of attempts at at, for deliveries still pending (an
// outcome that another attempt recorded first is dropped), and ends their leases: an outcome that
// ends its delivery (succeeded or failed) takes it out of the queue, whether or not it was the
// first recorded, and a retry makes it due at its next attempt. On PostgreSQL outside a
// transaction, in one statement.
func (s *Store) RecordDeliveries(ctx context.Context, outs []DeliveryOutcome, at time.Time) error {
	if len(outs) == 0 {
		return nil
	}
	at = at.UTC()
	if s.dialect != Postgres || s.inTx() {
		return s.Tx(ctx, func(tx *Store) error {
			var ended []string
			for _, o := range outs {
				fields := map[string]any{"status": o.State, "attempts": o.Attempts, "last_error": o.Error,
					"next_attempt_at": o.NextAttemptAt, "updated_at": at}
				if o.Status != 0 {
					fields["last_status"] = o.Status
				} else if o.Error != nil {
					fields["last_status"] = nil
				}
				if o.State == DeliverySucceeded {
					fields["delivered_at"] = o.deliveredAt(at)
				}
				res := tx.q(ctx).Model(&WebhookDelivery{}).Where("id = ? AND status = ?", o.ID, DeliveryPending).Updates(fields)
				if res.Error != nil {
					return translate(res.Error, "record webhook delivery")
				}
				if o.State != DeliveryPending {
					ended = append(ended, o.ID)
					continue
				}
				if res.RowsAffected > 0 {
					due := at
					if o.NextAttemptAt != nil {
						due = o.NextAttemptAt.UTC()
					}
					if err := tx.q(ctx).Exec(`UPDATE webhook_queue SET due_at = ?, leased_until = NULL, attempts = ? WHERE delivery_id = ?`,
						due, o.Attempts, o.ID).Error; err != nil {
						return translate(err, "record webhook delivery")
					}
				}
			}
			if len(ended) == 0 {
				return nil
			}
			// The ended deliveries leave the queue in one statement.
			q := tx.q(ctx).Exec(`DELETE FROM webhook_queue WHERE delivery_id IN ?`, uniq(ended))
			if q.Error != nil {
				return translate(q.Error, "record webhook deliveries")
			}
			tx.leftWebhooks(int(q.RowsAffected))
			return nil
		})
	}
	q := `WITH ` + recordDeliveriesPG(1, outs) + ` SELECT COUNT(*) FROM f`
	var left int
	err := s.pgxConn(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, q, recordDeliveriesArgs(outs, at)...).Scan(&left)
	})
	if err != nil {
		return translate(err, "record webhook deliveries")
	}
	s.leftWebhooks(left)
	return nil
}

// recordDeliveriesPG renders the common table expressions that record outcomes on PostgreSQL,
// from the parameters of recordDeliveriesArgs at $first on (the time at $first+6): v the outcomes
// (the first of a delivery's), u their deliveries' updates (of those still pending), r the
// retries' queue rows due at their next attempts, f the ended deliveries' queue rows deleted.
//
// When every outcome has the place of its queue row as its claim left it (QueueRow), r and f find
// the rows by those ctids (a TID scan of the list), each row checked to be one of the outcomes'
// deliveries, rather than by a join of the queue to the outcomes by delivery id: that join's
// generic plan, made while the queue was small, could be a hash join over a sequential scan of the
// whole queue, whose heap grows between two VACUUMs, and so kept the webhook queue vacuumed every
// tidyQueueEvery rows (queue_tidy.go). A row no longer where its claim left it was claimed again
// after its lease ran out (or deferred, or rescheduled): the claim that holds it now records its
// outcome, which ends the row or schedules it again.
func recordDeliveriesPG(first int, outs []DeliveryOutcome) string {
	q := recordDeliveriesCTEs
	if located(outs) {
		q = recordLocatedCTEs
	}
	for k := 8; k >= 0; k-- {
		name := "$N"
		if k > 0 {
			name += strconv.Itoa(k)
		}
		q = strings.ReplaceAll(q, name, "$"+strconv.Itoa(first+k))
	}
	return q
}

// located reports whether every outcome has the place of its queue row.
func located(outs []DeliveryOutcome) bool {
	for i := range outs {
		if !outs[i].QueueRow.tid.Valid {
			return false
		}
	}
	return true
}

// recordOutcomesCTEs are the common table expressions v and u of recordDeliveriesPG's text, its
// parameters named $N, $N1 … $N8.
const recordOutcomesCTEs = `v AS (SELECT DISTINCT ON (id) * FROM unnest($N::text[], $N1::text[], $N2::int[], $N3::int[], $N4::text[],
			$N5::timestamptz[], $N7::tid[], $N8::timestamptz[]) AS v(id, state, attempts, status, error, next, tid, answered) ORDER BY id),
		u AS (UPDATE webhook_deliveries d SET status = v.state, attempts = v.attempts,
				last_status = CASE WHEN v.status <> 0 THEN v.status WHEN v.error IS NULL THEN d.last_status END,
				last_error = v.error, next_attempt_at = v.next,
				delivered_at = CASE WHEN v.state = 'succeeded' THEN v.answered ELSE d.delivered_at END, updated_at = $N6
			FROM v WHERE d.id = v.id AND d.status = 'pending' RETURNING d.id, d.status, d.attempts, d.next_attempt_at),
		`

// recordDeliveriesCTEs is recordDeliveriesPG's text with the queue rows found by delivery id.
const recordDeliveriesCTEs = recordOutcomesCTEs + `r AS (UPDATE webhook_queue w SET due_at = COALESCE(u.next_attempt_at, $N6), leased_until = NULL, attempts = u.attempts
			FROM u WHERE w.delivery_id = u.id AND u.status = 'pending'),
		f AS (DELETE FROM webhook_queue w USING v WHERE w.delivery_id = v.id AND v.state <> 'pending' RETURNING 1)`

// recordLocatedCTEs is recordDeliveriesPG's text with the queue rows found by their ctids. The
// check that each row found is one of the outcomes' deliveries is a hashed subplan (the IN, which
// IS TRUE keeps from being made a join): written delivery_id = ANY (ARRAY(…)), it searched the
// outcomes' ids one after another for each row, a search as long as the batch (EXPLAIN ANALYZE
// of the delete's generic plan, 150 rows: 0.25 ms against 0.13, and 0.10 without the check).
const recordLocatedCTEs = recordOutcomesCTEs + `r AS (UPDATE webhook_queue w SET due_at = COALESCE(u.next_attempt_at, $N6), leased_until = NULL, attempts = u.attempts
			FROM u WHERE w.ctid = ANY (ARRAY(SELECT tid FROM v WHERE state = 'pending')) AND w.delivery_id = u.id AND u.status = 'pending'),
		f AS (DELETE FROM webhook_queue w WHERE w.ctid = ANY (ARRAY(SELECT tid FROM v WHERE state <> 'pending'))
			AND (w.delivery_id IN (SELECT id FROM v WHERE state <> 'pending')) IS TRUE RETURNING 1)`

// recordDeliveriesArgs are the parameters of recordDeliveriesPG for outcomes recorded at at.
func recordDeliveriesArgs(outs []DeliveryOutcome, at time.Time) []any {
	n := len(outs)
	ids, states, errs := make([]string, n), make([]string, n), make([]*string, n)
	attempts, status := make([]int32, n), make([]int32, n)
	next, tids, answered := make([]*time.Time, n), make([]pgtype.TID, n), make([]time.Time, n)
	for i, o := range outs {
		ids[i], states[i], errs[i], attempts[i], status[i], next[i] = o.ID, o.State, o.Error, int32(o.Attempts), int32(o.Status), o.NextAttemptAt
		tids[i], answered[i] = o.QueueRow.tid, o.deliveredAt(at)
	}
	return []any{ids, states, attempts, status, errs, next, at, tids, answered}
}

// endedCount is how many distinct deliveries outcomes end (leave the queue).
func endedCount(outs []DeliveryOutcome) int {
	var ended []string
	for _, o := range outs {
		if o.State != DeliveryPending {
			ended = append(ended, o.ID)
		}
	}
	return len(uniq(ended))
}

// DeferDeliveries makes pending deliveries due at due without counting an attempt (a slow
// endpoint's deliveries wait for a free slot), and ends their leases; on PostgreSQL in one
// statement.
func (s *Store) DeferDeliveries(ctx context.Context, ids []string, due time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	due, ids = due.UTC(), uniq(ids)
	if s.dialect == Postgres {
		err := s.q(ctx).Exec(`WITH q AS (UPDATE webhook_queue SET due_at = ?, leased_until = NULL WHERE delivery_id IN ?)
			UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id IN ? AND status = ?`, due, ids, due, ids, DeliveryPending).Error
		return translate(err, "defer webhook deliveries")
	}
	return s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Exec(`UPDATE webhook_queue SET due_at = ?, leased_until = NULL WHERE delivery_id IN ?`, due, ids).Error; err != nil {
			return translate(err, "defer webhook deliveries")
		}
		err := tx.q(ctx).Exec(`UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id IN ? AND status = ?`, due, ids, DeliveryPending).Error
		return translate(err, "defer webhook deliveries")
	})
}

// NextDeliveryDue is when the next pending delivery is due (the later of its due time and the end
// of its lease); nil when there is none.
func (s *Store) NextDeliveryDue(ctx context.Context) (*time.Time, error) {
	var free, leased []time.Time
	if err := s.q(ctx).Raw(`SELECT due_at FROM webhook_queue WHERE leased_until IS NULL OR leased_until <= due_at
		ORDER BY due_at LIMIT 1`).Scan(&free).Error; err != nil {
		return nil, translate(err, "next webhook delivery due")
	}
	if err := s.q(ctx).Raw(`SELECT leased_until FROM webhook_queue WHERE leased_until > due_at
		ORDER BY leased_until LIMIT 1`).Scan(&leased).Error; err != nil {
		return nil, translate(err, "next webhook delivery due")
	}
	return earliest(free, leased), nil
}

// enqueueDeliveries puts the pending ones of stored deliveries into the webhook queue, due at
// their next_attempt_at.
func (s *Store) enqueueDeliveries(ctx context.Context, ds []WebhookDelivery) error {
	type row struct {
		DeliveryID string
		DueAt      time.Time
		EndpointID string
		EventID    string
		Attempts   int
	}
	var rows []row
	for i := range ds {
		if d := &ds[i]; d.Status == DeliveryPending {
			rows = append(rows, row{DeliveryID: d.ID, DueAt: d.NextAttemptAt.UTC(), EndpointID: d.EndpointID, EventID: d.EventID,
				Attempts: d.Attempts})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return translate(s.q(ctx).Table("webhook_queue").CreateInBatches(&rows, eventsPerStatement).Error, "enqueue webhook deliveries")
}

// dequeueFinished takes deliveries that are no longer pending out of the webhook queue.
func (s *Store) dequeueFinished(ctx context.Context, ids []string) error {
	res := s.q(ctx).Exec(`DELETE FROM webhook_queue WHERE delivery_id IN ? AND delivery_id NOT IN
		(SELECT id FROM webhook_deliveries WHERE id IN ? AND status = ?)`, ids, ids, DeliveryPending)
	if res.Error != nil {
		return translate(res.Error, "dequeue webhook deliveries")
	}
	s.leftWebhooks(int(res.RowsAffected))
	return nil
}
