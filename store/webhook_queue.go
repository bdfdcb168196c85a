package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// The webhook deliveries are their own queue: a pending delivery is due at its next_attempt_at
// (index webhook_deliveries_due) unless it is leased. A deliverer claims due deliveries in
// batches, with their endpoints and events: the claim leases them until the end of a lease
// (leased_until), so that a deliverer that dies mid-attempt leaves the delivery to be attempted
// again once the lease is over (deliveries are at least once). No index covers leased_until, so
// on PostgreSQL the claim's update is heap-only (next_attempt_at, which the due index holds,
// keeps its value). The outcomes of a batch of attempts are recorded in one statement, which
// ends their leases.

// ClaimDeliveries claims up to limit due pending deliveries, oldest due first, for lease, and
// returns them with their endpoints and events in delivery id order. On PostgreSQL it is one
// statement, and concurrent claims (of this or another instance) skip each other's rows.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, limit int, lease time.Duration) ([]DeliveryWork, error) {
	now = now.UTC()
	if s.dialect != Postgres || s.inTx() {
		var out []DeliveryWork
		err := s.Tx(ctx, func(tx *Store) error {
			var ids []string
			if err := tx.q(ctx).Raw(`SELECT id FROM webhook_deliveries WHERE status = ? AND next_attempt_at <= ? AND `+notLeased+`
				ORDER BY next_attempt_at LIMIT ?`, DeliveryPending, now, now, limit).Scan(&ids).Error; err != nil {
				return translate(err, "claim webhook deliveries")
			}
			if len(ids) == 0 {
				return nil
			}
			if err := tx.q(ctx).Exec(`UPDATE webhook_deliveries SET leased_until = ? WHERE id IN ?`, now.Add(lease), ids).Error; err != nil {
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
			return nil
		})
		return out, err
	}
	q := `WITH q AS (
			SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= $1
				AND (leased_until IS NULL OR leased_until <= $1)
			ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED
		), l AS (
			UPDATE webhook_deliveries d SET leased_until = $3 FROM q WHERE d.id = q.id
			RETURNING d.id, d.status, d.attempts, d.endpoint_id, d.event_id
		)
		SELECT l.id, l.status, l.attempts, e.id, e.project_id, e.url, e.secret, e.previous_secret, e.previous_secret_until,
			e.enabled, e.failing_since, v.id, v.project_id, v.account_id, v.type, v.data, v.created_at, v.traceparent
		FROM l JOIN webhook_endpoints e ON e.id = l.endpoint_id JOIN events v ON v.id = l.event_id ORDER BY l.id`
	var out []DeliveryWork
	err := s.pgxConn(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, q, now, limit, now.Add(lease))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var w DeliveryWork
			d, e, v := &w.Delivery, &w.Endpoint, &w.Event
			if err := rows.Scan(&d.ID, &d.Status, &d.Attempts, &e.ID, &e.ProjectID, &e.URL, &e.Secret, &e.PreviousSecret,
				&e.PreviousSecretUntil, &e.Enabled, &e.FailingSince, &v.ID, &v.ProjectID, &v.AccountID, &v.Type, &v.Data,
				&v.CreatedAt, &v.Traceparent); err != nil {
				return err
			}
			d.ProjectID, d.EndpointID, d.EventID, d.EventType = v.ProjectID, e.ID, v.ID, v.Type
			v.CreatedAt = v.CreatedAt.UTC()
			out = append(out, w)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, translate(err, "claim webhook deliveries")
	}
	return out, nil
}

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
}

// RecordDeliveries records the outcomes of attempts at at, for deliveries still pending (an
// outcome that another attempt recorded first is dropped); on PostgreSQL outside a transaction,
// in one statement.
func (s *Store) RecordDeliveries(ctx context.Context, outs []DeliveryOutcome, at time.Time) error {
	if len(outs) == 0 {
		return nil
	}
	at = at.UTC()
	if s.dialect != Postgres || s.inTx() {
		return s.Tx(ctx, func(tx *Store) error {
			for _, o := range outs {
				fields := map[string]any{"status": o.State, "attempts": o.Attempts, "last_error": o.Error,
					"next_attempt_at": o.NextAttemptAt, "leased_until": nil, "updated_at": at}
				if o.Status != 0 {
					fields["last_status"] = o.Status
				} else if o.Error != nil {
					fields["last_status"] = nil
				}
				if o.State == DeliverySucceeded {
					fields["delivered_at"] = at
				}
				if err := tx.q(ctx).Model(&WebhookDelivery{}).Where("id = ? AND status = ?", o.ID, DeliveryPending).
					Updates(fields).Error; err != nil {
					return translate(err, "record webhook delivery")
				}
			}
			return nil
		})
	}
	n := len(outs)
	ids, states, errs := make([]string, n), make([]string, n), make([]*string, n)
	attempts, status := make([]int32, n), make([]int32, n)
	next := make([]*time.Time, n)
	for i, o := range outs {
		ids[i], states[i], errs[i], attempts[i], status[i], next[i] = o.ID, o.State, o.Error, int32(o.Attempts), int32(o.Status), o.NextAttemptAt
	}
	q := `UPDATE webhook_deliveries d SET status = v.state, attempts = v.attempts,
			last_status = CASE WHEN v.status <> 0 THEN v.status WHEN v.error IS NULL THEN d.last_status END,
			last_error = v.error, next_attempt_at = v.next, leased_until = NULL,
			delivered_at = CASE WHEN v.state = 'succeeded' THEN $7 ELSE d.delivered_at END, updated_at = $7
		FROM (SELECT DISTINCT ON (id) * FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[], $6::timestamptz[])
			AS v(id, state, attempts, status, error, next) ORDER BY id) v
		WHERE d.id = v.id AND d.status = 'pending'`
	err := s.pgxConn(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, q, ids, states, attempts, status, errs, next, at)
		return err
	})
	return translate(err, "record webhook deliveries")
}

// DeferDeliveries makes pending deliveries due at due without counting an attempt (a slow
// endpoint's deliveries wait for a free slot), and ends their leases.
func (s *Store) DeferDeliveries(ctx context.Context, ids []string, due time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.q(ctx).Exec(`UPDATE webhook_deliveries SET next_attempt_at = ?, leased_until = NULL WHERE id IN ? AND status = ?`,
		due.UTC(), uniq(ids), DeliveryPending).Error
	return translate(err, "defer webhook deliveries")
}

// NextDeliveryDue is when the next pending delivery is due (the later of its next_attempt_at and
// the end of its lease); nil when there is none.
func (s *Store) NextDeliveryDue(ctx context.Context) (*time.Time, error) {
	var free, leased []time.Time
	if err := s.q(ctx).Raw(`SELECT next_attempt_at FROM webhook_deliveries WHERE status = ?
		AND (leased_until IS NULL OR leased_until <= next_attempt_at) ORDER BY next_attempt_at LIMIT 1`,
		DeliveryPending).Scan(&free).Error; err != nil {
		return nil, translate(err, "next webhook delivery due")
	}
	if err := s.q(ctx).Raw(`SELECT leased_until FROM webhook_deliveries WHERE status = ? AND leased_until > next_attempt_at
		ORDER BY leased_until LIMIT 1`, DeliveryPending).Scan(&leased).Error; err != nil {
		return nil, translate(err, "next webhook delivery due")
	}
	return earliest(free, leased), nil
}
