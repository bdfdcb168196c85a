package store

import (
	"context"
	"encoding/json"
	"time"

	"gorm.io/gorm/clause"
)

// The outbound path works messages in batches: the dispatch jobs that run at the same time share
// one transaction to claim their messages and one to record their submissions, and concurrent
// receipts share one to record the outcomes (see Batcher). These are its statements; on
// PostgreSQL each is one statement for the whole batch.

// LockMessages reads messages for update inside a transaction, keyed by id; ids that name no
// message are absent. Rows are locked in id order, so two batches never deadlock.
func (s *Store) LockMessages(ctx context.Context, ids []string) (map[string]*Message, error) {
	q := s.q(ctx).Where("id IN ?", uniq(ids)).Order("id")
	if s.dialect == Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var rows []Message
	if err := q.Find(&rows).Error; err != nil {
		return nil, translate(err, "lock messages")
	}
	out := make(map[string]*Message, len(rows))
	for i := range rows {
		out[rows[i].ID] = &rows[i]
	}
	return out, nil
}

// Submitted is a message its carrier accepted, with the carrier's id of it ("" when the carrier
// gave none).
type Submitted struct {
	ID        string `json:"id"`
	CarrierID string `json:"cid"`
}

// MarkSent moves messages that are still `sending` to `sent` at at, and returns them as they now
// are. A message no longer sending (a receipt overtook the submission's record) is left alone
// and not returned.
func (s *Store) MarkSent(ctx context.Context, subs []Submitted, at time.Time) ([]Message, error) {
	if len(subs) == 0 {
		return nil, nil
	}
	var out []Message
	if s.dialect == Postgres {
		b, err := json.Marshal(subs)
		if err != nil {
			return nil, err
		}
		err = scan(s.q(ctx).Raw(`UPDATE messages AS m SET status = ?, sent_at = ?, updated_at = ?,
			carrier_id = COALESCE(NULLIF(v.cid, ''), m.carrier_id)
			FROM (SELECT DISTINCT ON (id) id, cid FROM jsonb_to_recordset(?::jsonb) AS x(id text, cid text)) AS v
			WHERE m.id IN ? AND m.id = v.id AND m.status = ? RETURNING m.*`, StatusSent, at, at, string(b), idsOf(subs, func(s Submitted) string { return s.ID }), StatusSending), &out).Error
		return out, translate(err, "mark messages sent")
	}
	for _, sub := range subs {
		fields := map[string]any{"status": StatusSent, "sent_at": at, "updated_at": at}
		if sub.CarrierID != "" {
			fields["carrier_id"] = sub.CarrierID
		}
		var rows []Message
		res := s.q(ctx).Model(&rows).Clauses(clause.Returning{}).Where("id = ? AND status = ?", sub.ID, StatusSending).Updates(fields)
		if res.Error != nil {
			return nil, translate(res.Error, "mark message sent")
		}
		out = append(out, rows...)
	}
	return out, nil
}

// idsOf lists the distinct ids of a batch update's rows. The batch updates name their rows twice:
// in the JSON of their values, and as a list of ids, which lets the planner find them by the
// primary key (it cannot see into the JSON).
func idsOf[T any](rows []T, id func(T) string) []string {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = id(r)
	}
	return uniq(ids)
}

// Outcome is a carrier's report of an outbound message's fate.
type Outcome struct {
	// ID is the message's id (the carrier's client reference).
	ID string `json:"id"`
	// Status is StatusDelivered or StatusFailed; Reason the failure reason of a failed one.
	Status string    `json:"status"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	// CarrierID, when not empty, fills a missing carrier id.
	CarrierID string `json:"cid"`
}

// Finished is an outbound message as its outcome left it.
type Finished struct {
	Message
	// WasSending is true when the message was still `sending`: the outcome overtook the record of
	// its submission (the carrier answered before the dispatch wrote down that it had accepted the
	// message), so the same statement recorded the sent step too, sent_at at the outcome's time.
	// The caller announces message.sent before the outcome.
	WasSending bool
}

// FinishOutbound records the outcomes of outbound messages that are `sending` or `sent`, and
// returns, aligned with outs, each message as it now is, or nil when it was not waiting for one
// (unknown, inbound, already final, or named twice: carriers repeat receipts). An outcome is never
// dated before the message's sent_at (a carrier's clock, or a receipt that waited, can say so).
func (s *Store) FinishOutbound(ctx context.Context, outs []Outcome) ([]*Finished, error) {
	res := make([]*Finished, len(outs))
	if len(outs) == 0 {
		return res, nil
	}
	var rows []Finished
	if s.dialect == Postgres {
		b, err := json.Marshal(outs)
		if err != nil {
			return nil, err
		}
		// w locks the messages (in id order, as LockMessages does) and reads the status each had
		// before, which RETURNING cannot show: a row that a concurrent statement changed is read
		// as that statement left it.
		var out []struct {
			Message    `gorm:"embedded"`
			WasSending bool
		}
		err = scan(s.q(ctx).Raw(`WITH w AS (SELECT id, status FROM messages WHERE id IN ? AND direction = ? AND status IN (?, ?)
				ORDER BY id FOR UPDATE)
			UPDATE messages AS m SET status = v.status, updated_at = GREATEST(v.at, m.sent_at), sent_at = COALESCE(m.sent_at, v.at),
			delivered_at = CASE WHEN v.status = ? THEN GREATEST(v.at, m.sent_at) ELSE m.delivered_at END,
			failed_at = CASE WHEN v.status = ? THEN GREATEST(v.at, m.sent_at) ELSE m.failed_at END,
			failure_reason = CASE WHEN v.status = ? THEN v.reason ELSE m.failure_reason END,
			carrier_id = COALESCE(m.carrier_id, NULLIF(v.cid, ''))
			FROM (SELECT DISTINCT ON (id) id, status, at, reason, cid
				FROM jsonb_to_recordset(?::jsonb) AS x(id text, status text, at timestamptz, reason text, cid text)) AS v, w
			WHERE m.id IN ? AND m.id = v.id AND m.id = w.id AND m.status IN (?, ?) RETURNING m.*, w.status = ? AS was_sending`,
			idsOf(outs, func(o Outcome) string { return o.ID }), DirectionOutbound, StatusSending, StatusSent,
			StatusDelivered, StatusFailed, StatusFailed, string(b), idsOf(outs, func(o Outcome) string { return o.ID }),
			StatusSending, StatusSent, StatusSending), &out).Error
		if err != nil {
			return nil, translate(err, "finish messages")
		}
		for _, r := range out {
			rows = append(rows, Finished{Message: r.Message, WasSending: r.WasSending})
		}
	} else {
		// The transaction holds SQLite's write lock: what is read first is still current.
		var prior []struct {
			ID     string
			Status string
			SentAt *time.Time
		}
		if err := s.q(ctx).Model(&Message{}).Select("id, status, sent_at").Where("id IN ?", idsOf(outs, func(o Outcome) string { return o.ID })).
			Find(&prior).Error; err != nil {
			return nil, translate(err, "read messages to finish")
		}
		wasSending, sentAt := make(map[string]bool, len(prior)), make(map[string]*time.Time, len(prior))
		for _, p := range prior {
			wasSending[p.ID], sentAt[p.ID] = p.Status == StatusSending, p.SentAt
		}
		for _, o := range outs {
			if at := sentAt[o.ID]; at != nil && at.After(o.At) {
				o.At = *at
			}
			fields := map[string]any{"status": o.Status, "updated_at": o.At, "sent_at": clause.Expr{SQL: "COALESCE(sent_at, ?)", Vars: []any{o.At}}}
			if o.Status == StatusFailed {
				fields["failed_at"], fields["failure_reason"] = o.At, o.Reason
			} else {
				fields["delivered_at"] = o.At
			}
			if o.CarrierID != "" {
				fields["carrier_id"] = clause.Expr{SQL: "COALESCE(carrier_id, ?)", Vars: []any{o.CarrierID}}
			}
			var one []Message
			err := s.q(ctx).Model(&one).Clauses(clause.Returning{}).
				Where("id = ? AND direction = ? AND status IN ?", o.ID, DirectionOutbound, []string{StatusSending, StatusSent}).Updates(fields).Error
			if err != nil {
				return nil, translate(err, "finish message "+o.ID)
			}
			for _, m := range one {
				rows = append(rows, Finished{Message: m, WasSending: wasSending[m.ID]})
			}
		}
	}
	byID := make(map[string]*Finished, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	for i, o := range outs {
		if m := byID[o.ID]; m != nil {
			res[i] = m
			delete(byID, o.ID) // a repeat in the same batch changed nothing
		}
	}
	return res, nil
}
