package store

import (
	"context"
	"fmt"
	"time"
)

// Retention says how long each kind of record is kept; zero keeps it forever.
type Retention struct {
	// APILogs are the API request log's rows.
	APILogs time.Duration
	// WebhookDeliveries are deliveries that succeeded. Failed ones stay (replayable) until their
	// event goes.
	WebhookDeliveries time.Duration
	// Events are events with their remaining deliveries; an event with a delivery still pending
	// (a replay in progress) stays.
	Events time.Duration
}

// EndedSessionsKept is how long a console session stays in the database after it ended (expired
// or revoked): nothing reads it then, so Prune deletes it whatever the retention.
const EndedSessionsKept = 7 * 24 * time.Hour

// Pruned counts what one Prune deleted, by kind.
type Pruned struct {
	APILogs, WebhookDeliveries, Events, ConsoleSessions int64
}

// PruneLimits bound one Prune: it deletes in transactions of Batch rows, at most MaxBatches per
// kind, so that a large backlog is worked off over several runs without long transactions.
type PruneLimits struct {
	// Batch is the rows per transaction. Defaults to 1,000.
	Batch int
	// MaxBatches is the transactions per kind and run. Defaults to 100.
	MaxBatches int
}

// Prune deletes what is older than the retention allows, and console sessions that ended more
// than EndedSessionsKept ago, as of now, in bounded batches.
func (s *Store) Prune(ctx context.Context, r Retention, now time.Time, lim PruneLimits) (Pruned, error) {
	if lim.Batch <= 0 {
		lim.Batch = 1000
	}
	if lim.MaxBatches <= 0 {
		lim.MaxBatches = 100
	}
	var out Pruned
	var err error
	if r.APILogs > 0 {
		if out.APILogs, err = s.pruneAPILogs(ctx, now.Add(-r.APILogs), lim); err != nil {
			return out, err
		}
	}
	if r.WebhookDeliveries > 0 {
		if out.WebhookDeliveries, err = s.pruneDeliveries(ctx, now.Add(-r.WebhookDeliveries), lim); err != nil {
			return out, err
		}
	}
	if r.Events > 0 {
		var deliveries int64
		if out.Events, deliveries, err = s.pruneEvents(ctx, now.Add(-r.Events), lim); err != nil {
			return out, err
		}
		out.WebhookDeliveries += deliveries
	}
	if out.ConsoleSessions, err = s.pruneConsoleSessions(ctx, now.Add(-EndedSessionsKept), lim); err != nil {
		return out, err
	}
	return out, nil
}

// pruneConsoleSessions deletes console sessions that ended (expired or revoked) before cutoff.
func (s *Store) pruneConsoleSessions(ctx context.Context, cutoff time.Time, lim PruneLimits) (int64, error) {
	return s.deleteInBatches(ctx, "console sessions", lim, `DELETE FROM console_sessions WHERE id IN (SELECT id FROM console_sessions
		WHERE expires_at < ? OR revoked_at < ? ORDER BY id LIMIT ?)`, cutoff, cutoff)
}

// pruneAPILogs deletes API logs created before cutoff, oldest first. The log has no index on its
// time: rows are walked in id order (insertion order), and a batch stops at the first recent row.
func (s *Store) pruneAPILogs(ctx context.Context, cutoff time.Time, lim PruneLimits) (int64, error) {
	return s.deleteInBatches(ctx, "api logs", lim,
		`DELETE FROM api_logs WHERE created_at < ? AND id IN (SELECT id FROM api_logs ORDER BY id LIMIT ?)`, cutoff)
}

// deleteInBatches runs stmt, whose last parameter is the batch's LIMIT (after args), until it
// deletes fewer rows than a batch or lim.MaxBatches ran, and returns the rows deleted.
func (s *Store) deleteInBatches(ctx context.Context, what string, lim PruneLimits, stmt string, args ...any) (int64, error) {
	var total int64
	args = append(args, lim.Batch)
	for range lim.MaxBatches {
		res := s.q(ctx).Exec(stmt, args...)
		if res.Error != nil {
			return total, fmt.Errorf("store: prune %s: %w", what, res.Error)
		}
		total += res.RowsAffected
		if res.RowsAffected < int64(lim.Batch) {
			break
		}
	}
	return total, nil
}

// pruneDeliveries deletes succeeded deliveries created before cutoff, walking the primary key
// (ids are time-ordered) up to cutoff's.
func (s *Store) pruneDeliveries(ctx context.Context, cutoff time.Time, lim PruneLimits) (int64, error) {
	var total int64
	last, end := "", IDAt(PrefixWebhookDelivery, cutoff)
	for range lim.MaxBatches {
		var ids []string
		if err := s.q(ctx).Raw(`SELECT id FROM webhook_deliveries WHERE id > ? AND id < ? AND status = ? ORDER BY id LIMIT ?`,
			last, end, DeliverySucceeded, lim.Batch).Scan(&ids).Error; err != nil {
			return total, fmt.Errorf("store: prune webhook deliveries: %w", err)
		}
		if len(ids) == 0 {
			break
		}
		res := s.q(ctx).Exec(`DELETE FROM webhook_deliveries WHERE id IN ? AND status = ?`, ids, DeliverySucceeded)
		if res.Error != nil {
			return total, fmt.Errorf("store: prune webhook deliveries: %w", res.Error)
		}
		total += res.RowsAffected
		last = ids[len(ids)-1]
		if len(ids) < lim.Batch {
			break
		}
	}
	return total, nil
}

// pruneEvents deletes events created before cutoff with their deliveries, each batch in one
// transaction; an event with a delivery still pending stays, with its deliveries.
func (s *Store) pruneEvents(ctx context.Context, cutoff time.Time, lim PruneLimits) (events, deliveries int64, err error) {
	last, end := "", IDAt(PrefixEvent, cutoff)
	for range lim.MaxBatches {
		var ids []string
		if err := s.q(ctx).Raw(`SELECT id FROM events WHERE id > ? AND id < ? ORDER BY id LIMIT ?`, last, end, lim.Batch).
			Scan(&ids).Error; err != nil {
			return events, deliveries, fmt.Errorf("store: prune events: %w", err)
		}
		if len(ids) == 0 {
			break
		}
		err := s.Tx(ctx, func(tx *Store) error {
			var busy []string
			if err := tx.q(ctx).Raw(`SELECT DISTINCT event_id FROM webhook_deliveries WHERE event_id IN ? AND status = ?`,
				ids, DeliveryPending).Scan(&busy).Error; err != nil {
				return err
			}
			done := without(ids, busy)
			if len(done) == 0 {
				return nil
			}
			res := tx.q(ctx).Exec(`DELETE FROM webhook_deliveries WHERE event_id IN ?`, done)
			if res.Error != nil {
				return res.Error
			}
			deliveries += res.RowsAffected
			res = tx.q(ctx).Exec(`DELETE FROM events WHERE id IN ?`, done)
			events += res.RowsAffected
			return res.Error
		})
		if err != nil {
			return events, deliveries, fmt.Errorf("store: prune events: %w", err)
		}
		last = ids[len(ids)-1]
		if len(ids) < lim.Batch {
			break
		}
	}
	return events, deliveries, nil
}

// without returns the ids that are not in drop.
func without(ids, drop []string) []string {
	skip := make(map[string]bool, len(drop))
	for _, d := range drop {
		skip[d] = true
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !skip[id] {
			out = append(out, id)
		}
	}
	return out
}
