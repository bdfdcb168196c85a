package store

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// The outbound queue (table outbound_queue) holds the outbound messages that have yet to reach
// their carrier. A message enters it in the statement that stores it, and leaves it in the
// statement that records it sent, failed or canceled. A row is due when its due_at has come and
// it is not leased. Dispatchers claim due rows in batches: the claim leases each row until the
// end of a lease (leased_until), so that a dispatcher that dies mid-submission leaves its
// messages to be claimed again once the lease is over (the carrier answers a repeated reference
// with its first submission), and moves the messages it can submit at once to `sending` in the
// same statement. The lease is a column that no index covers, so that on PostgreSQL the claim's
// update is heap-only: it writes no index entry (due_at, which outbound_queue_due indexes, keeps
// its value).

// OutboundCriteria says which claimed messages a claim moves to `sending` at once: those queued
// or scheduled whose sender is unpaced or whose pacing slot has come, not expired, and not to a
// recipient the account has blocked. The others come back unclaimed for the caller to decide.
type OutboundCriteria struct {
	// Now is the claim's time, read from Clock when the claim has its connection (set, Clock
	// overrides Now): a claim that waited for SQLite's single writer must not judge what is due by
	// the time it started waiting, which a test clock may have left far ahead.
	Now   time.Time
	Clock func() time.Time
	// Limit is the most messages of one claim.
	Limit int
	// Lease is how long the claimed messages are the claimer's: their rows are due again after it.
	Lease time.Duration
	// Unpaced lists the sender types (number types) that send without pacing.
	Unpaced []string
	// SlotTolerance is how early a message may take its pacing slot.
	SlotTolerance time.Duration
	// Expiry is how long a message may wait to be sent, counted from its send_at or creation.
	Expiry time.Duration
}

// OutboundWork is a claimed outbound message with what its submission and its events need.
type OutboundWork struct {
	Message
	Contact     Contact
	PhoneNumber PhoneNumber
	// Claimed is true when the claim moved the message to `sending`: it is the caller's to submit.
	Claimed bool
	// Attempts counts the claims of the message, this one included.
	Attempts int
	// Block is the account's block on the recipient, if there is one, on a message the claim did
	// not move to `sending` (a claimed message's recipient has no block in force).
	Block *BlockedNumber
	// QueueRow is where the claim left the message's queue row (PostgreSQL): give it back in Sent
	// so that the record of the submission deletes the row without a look-up by message id.
	QueueRow QueueRow
}

// QueueRow locates a row of the outbound queue as a claim left it (its ctid on PostgreSQL; the
// zero value locates nothing). It is a hint: a row moved since (requeued, claimed again) is no
// longer there, and what is there is checked to be the same message's.
type QueueRow struct{ tid pgtype.TID }

// queuedSince is when a message started waiting to be sent: its send_at when later than its
// creation.
func queuedSince(m *Message) time.Time {
	if m.SendAt != nil && m.SendAt.After(m.CreatedAt) {
		return *m.SendAt
	}
	return m.CreatedAt
}

// claimable is OutboundCriteria's rule for one message (PostgreSQL applies it in SQL).
func (c OutboundCriteria) claimable(w *OutboundWork) bool {
	if w.Status != StatusQueued && w.Status != StatusScheduled {
		return false
	}
	if !slices.Contains(c.Unpaced, w.SenderType) && (w.NotBefore == nil || w.NotBefore.After(c.Now.Add(c.SlotTolerance))) {
		return false
	}
	if !queuedSince(&w.Message).After(c.Now.Add(-c.Expiry)) {
		return false
	}
	return w.Block == nil || !w.Block.RetryAfter.After(c.Now)
}

// ClaimOutbound claims up to c.Limit due messages of the outbound queue, oldest due first, for
// c.Lease, and moves those that c allows to `sending`. On PostgreSQL it is one statement, and
// concurrent claims (of this or another instance) skip each other's rows.
func (s *Store) ClaimOutbound(ctx context.Context, c OutboundCriteria) ([]OutboundWork, error) {
	if s.dialect == Postgres {
		if c.Clock != nil {
			c.Now = c.Clock()
		}
		return s.claimOutboundPG(ctx, c, c.Now.UTC())
	}
	var out []OutboundWork
	var now time.Time
	err := s.Tx(ctx, func(tx *Store) error {
		if c.Clock != nil {
			c.Now = c.Clock()
		}
		now = c.Now.UTC()
		var rows []struct {
			MessageID string
			Attempts  int
		}
		if err := tx.q(ctx).Raw(`SELECT message_id, attempts FROM outbound_queue WHERE due_at <= ? AND `+notLeased+`
			ORDER BY due_at LIMIT ?`, now, now, c.Limit).Scan(&rows).Error; err != nil {
			return translate(err, "claim outbound")
		}
		if len(rows) == 0 {
			return nil
		}
		ids, attempts := make([]string, len(rows)), make(map[string]int, len(rows))
		for i, r := range rows {
			ids[i], attempts[r.MessageID] = r.MessageID, r.Attempts+1
		}
		if err := tx.q(ctx).Exec(`UPDATE outbound_queue SET leased_until = ?, attempts = attempts + 1 WHERE message_id IN ?`,
			now.Add(c.Lease), ids).Error; err != nil {
			return translate(err, "lease outbound")
		}
		works, err := tx.outboundWorks(ctx, ids)
		if err != nil {
			return err
		}
		var sending []string
		for i := range works {
			w := &works[i]
			w.Attempts = attempts[w.ID]
			if c.claimable(w) {
				w.Claimed, w.Block = true, nil
				sending = append(sending, w.ID)
			}
		}
		if len(sending) > 0 {
			if err := tx.q(ctx).Exec(`UPDATE messages SET status = ?, updated_at = ? WHERE id IN ?`, StatusSending, now, sending).Error; err != nil {
				return translate(err, "mark messages sending")
			}
		}
		out = works
		return nil
	})
	for i := range out {
		if out[i].Claimed {
			out[i].Status, out[i].UpdatedAt = StatusSending, now
		}
	}
	return out, err
}

// outboundWorks reads messages with their contacts, numbers and blocks, in id order.
func (s *Store) outboundWorks(ctx context.Context, ids []string) ([]OutboundWork, error) {
	var msgs []Message
	if err := s.q(ctx).Where("id IN ?", ids).Order("id").Find(&msgs).Error; err != nil {
		return nil, translate(err, "read outbound messages")
	}
	views, err := s.MessageViews(ctx, msgs)
	if err != nil {
		return nil, err
	}
	var accounts, phones []string
	for _, m := range msgs {
		accounts, phones = append(accounts, m.AccountID), append(phones, m.ToNumber)
	}
	blocks, err := s.BlockedAmong(ctx, accounts, phones)
	if err != nil {
		return nil, err
	}
	out := make([]OutboundWork, len(views))
	for i, v := range views {
		out[i] = OutboundWork{Message: v.Message, Contact: v.Contact, PhoneNumber: v.PhoneNumber}
		if b, ok := blocks[[2]string{v.AccountID, v.ToNumber}]; ok {
			out[i].Block = &b
		}
	}
	return out, nil
}

func (s *Store) claimOutboundPG(ctx context.Context, c OutboundCriteria, now time.Time) ([]OutboundWork, error) {
	// The lease is one update, which finds the due rows by the ctids of a plain select (a TID scan)
	// and returns where each updated row is now, for the record of the submission to delete it the
	// same way. It locks no row first: a FOR UPDATE SKIP LOCKED select wrote a WAL record for each
	// row's lock before the update wrote another. A concurrent claim (another instance's) that
	// leased one of the rows first holds this update until it commits; the update then checks the
	// row's new version against its conditions again (READ COMMITTED), finds it leased and leaves it
	// out, so that no message is claimed twice; a row requeued or deleted meanwhile is left out the
	// same way. Claims take their rows in ctid order (a TID scan sorts its list), so two cannot
	// deadlock. The messages it moves to `sending` come back from their update (RETURNING), with
	// their contacts and numbers; only the others (none, mostly) are read again with their blocks:
	// a final join of every leased row to messages and blocked_numbers read each claimed message
	// twice, about 6 of the 23.5 buffers a message.
	q := `WITH l AS (
			UPDATE outbound_queue o SET leased_until = $3, attempts = o.attempts + 1
			WHERE o.ctid = ANY (ARRAY(SELECT ctid FROM outbound_queue WHERE due_at <= $1 AND (leased_until IS NULL OR leased_until <= $1)
				ORDER BY due_at LIMIT $2)) AND o.due_at <= $1 AND (o.leased_until IS NULL OR o.leased_until <= $1)
			RETURNING o.message_id, o.attempts, o.ctid
		), s AS (
			UPDATE messages m SET status = 'sending', updated_at = $1 FROM l
			WHERE m.id = l.message_id AND m.status IN ('queued', 'scheduled')
				AND (m.sender_type = ANY($4) OR m.not_before <= $5)
				AND GREATEST(COALESCE(m.send_at, m.created_at), m.created_at) > $6
				AND NOT EXISTS (SELECT 1 FROM blocked_numbers b WHERE b.account_id = m.account_id
					AND b.phone_number = m.to_number AND b.retry_after > $1)
			RETURNING ` + colsOf("m", messageCols) + `, l.attempts AS q_attempts, l.ctid AS q_tid
		)
		SELECT ` + colsOf("s", messageCols) + `, true, s.q_attempts, ` + colsOf("k", contactCols) + `, ` +
		colsOf("pn", numberCols) + `, NULL, NULL::timestamptz, NULL::timestamptz, s.q_tid
		FROM s JOIN contacts k ON k.id = s.contact_id JOIN phone_numbers pn ON pn.id = s.phone_number_id
		UNION ALL
		SELECT ` + colsOf("m", messageCols) + `, false, l.attempts, ` + colsOf("k", contactCols) + `, ` +
		colsOf("pn", numberCols) + `, b.reason, b.blocked_at, b.retry_after, l.ctid
		FROM l JOIN messages m ON m.id = l.message_id
		JOIN contacts k ON k.id = m.contact_id JOIN phone_numbers pn ON pn.id = m.phone_number_id
		LEFT JOIN blocked_numbers b ON b.account_id = m.account_id AND b.phone_number = m.to_number
		WHERE l.message_id NOT IN (SELECT id FROM s)
		ORDER BY 1`
	var out []OutboundWork
	err := s.pgxConn(ctx, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, q, now, c.Limit, now.Add(c.Lease), c.Unpaced, now.Add(c.SlotTolerance), now.Add(-c.Expiry))
		if err != nil {
			return err
		}
		defer rows.Close()
		// Each row is scanned in place, its text through an interner (most of it repeats from row to
		// row); the block's columns into variables that every row sets.
		var reason *string
		var blockedAt, retryAfter *time.Time
		var texts textInterner
		var dest []any
		for rows.Next() {
			out = append(out, OutboundWork{})
			w := &out[len(out)-1]
			dest = append(appendMessageDest(dest[:0], &w.Message), &w.Claimed, &w.Attempts)
			dest = appendNumberDest(appendContactDest(dest, &w.Contact), &w.PhoneNumber)
			if err := texts.scan(rows, append(dest, &reason, &blockedAt, &retryAfter, &w.QueueRow.tid)); err != nil {
				return err
			}
			utcMessage(&w.Message)
			utcContact(&w.Contact)
			utcNumber(&w.PhoneNumber)
			if reason != nil {
				w.Block = &BlockedNumber{AccountID: w.AccountID, PhoneNumber: w.ToNumber, Reason: *reason,
					BlockedAt: blockedAt.UTC(), RetryAfter: retryAfter.UTC()}
			}
			if w.Claimed {
				w.Status, w.UpdatedAt = StatusSending, now
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, translate(err, "claim outbound")
	}
	return out, nil
}

// Sent is an outbound message its carrier accepted, with the carrier's id of it ("" when the
// carrier gave none) and its message.sent event.
type Sent struct {
	ID        string
	CarrierID string
	// Event is the message's message.sent, recorded only when this call moves the message to sent.
	Event Event
	// QueueRow is the claim's OutboundWork.QueueRow (optional).
	QueueRow QueueRow
}

// RecordSent moves messages that are still `sending` to `sent` at at, takes them out of the
// outbound queue and records the message.sent event of each message it moved (with its webhook
// deliveries), all in one statement on PostgreSQL. A message no longer sending (a receipt
// overtook the record of its submission) keeps its state, and its event is not recorded.
func (s *Store) RecordSent(ctx context.Context, sent []Sent, at time.Time) error {
	if len(sent) == 0 {
		return nil
	}
	at = at.UTC()
	evs := make([]Event, len(sent))
	for i, x := range sent {
		evs[i] = x.Event
		evs[i].subject = x.ID
	}
	if s.dialect != Postgres || s.inTx() {
		return s.Tx(ctx, func(tx *Store) error {
			var moved []string
			for _, x := range sent {
				fields := map[string]any{"status": StatusSent, "sent_at": at, "updated_at": at}
				if x.CarrierID != "" {
					fields["carrier_id"] = x.CarrierID
				}
				res := tx.q(ctx).Model(&Message{}).Where("id = ? AND status = ?", x.ID, StatusSending).Updates(fields)
				if res.Error != nil {
					return translate(res.Error, "mark message sent")
				}
				if res.RowsAffected == 1 {
					moved = append(moved, x.ID)
				}
			}
			if err := tx.dropOutbound(ctx, idsOf(sent, func(x Sent) string { return x.ID })); err != nil {
				return err
			}
			var keep []Event
			for _, e := range evs {
				if slices.Contains(moved, e.subject) {
					keep = append(keep, e)
				}
			}
			return tx.InsertEvents(ctx, keep)
		})
	}
	ids, cids, tids := make([]string, len(sent)), make([]string, len(sent)), make([]pgtype.TID, len(sent))
	located := true
	for i, x := range sent {
		ids[i], cids[i], tids[i] = x.ID, x.CarrierID, x.QueueRow.tid
		located = located && x.QueueRow.tid.Valid
	}
	// The queue rows go by the ctids the claim returned, each checked to hold one of these messages:
	// a TID scan of the list. A join of the queue to v on ctid and message id was planned, in the
	// generic plan made while the queue was small, as a walk of the queue's whole primary key with
	// a comparison of every entry with every row of v (22,350 rows removed by the join filter for
	// 150 messages, 3.4 of a 4.3 ms statement in EXPLAIN ANALYZE); with no join the plan is the
	// TID scan or, on a small queue, the primary key's look-ups, whatever the statistics. A row
	// that has moved since (claimed again after a lapsed lease) stays, and its next claim finds the
	// message sent and drops it. Each row's message is checked through a hashed subplan (IN over the
	// ids, IS TRUE so that the planner keeps it a filter rather than a join): = ANY($1) searched the
	// batch's ids one by one for every row, 210-310 against 115-200 us for 150 rows in the generic
	// plan. Without every row's place, by message id.
	dq := `dq AS (DELETE FROM outbound_queue q WHERE q.ctid = ANY($4::tid[]) AND (q.message_id IN (SELECT unnest($1::text[]))) IS TRUE)`
	if !located {
		dq = `dq AS (DELETE FROM outbound_queue q WHERE q.message_id = ANY($1::text[]))`
	}
	prepareEvents(ctx, evs, at)
	defer s.leftOutbound(len(ids))
	return s.execEventsPG(ctx, evs, at, func(ea *eventArrays, slots int) (string, []any) {
		q := `WITH v AS (SELECT * FROM unnest($1::text[], $2::text[], $4::tid[]) AS v(id, cid, tid)),
		u AS (UPDATE messages m SET status = 'sent', sent_at = $3, updated_at = $3,
				carrier_id = COALESCE(NULLIF(v.cid, ''), m.carrier_id)
			FROM v WHERE m.id = v.id AND m.status = 'sending' RETURNING m.id),
		` + dq + `, ` + eventsFanout(5, slots, "WHERE ev.subject IN (SELECT id FROM u)")
		return q, append([]any{ids, cids, at, tids}, ea.args(at)...)
	})
}

// notLeased is the condition of a queue row that no claim holds at a time (the one parameter).
const notLeased = `(leased_until IS NULL OR leased_until <= ?)`

// RequeueOutbound makes messages of the outbound queue due at due (a pacing slot, the retry of a
// submission that failed for now), and ends their lease.
func (s *Store) RequeueOutbound(ctx context.Context, ids []string, due time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return translate(s.q(ctx).Exec(`UPDATE outbound_queue SET due_at = ?, leased_until = NULL WHERE message_id IN ?`,
		due.UTC(), uniq(ids)).Error, "requeue outbound")
}

// DropOutbound takes messages out of the outbound queue (they were sent, failed or canceled).
func (s *Store) DropOutbound(ctx context.Context, ids []string) error {
	return s.dropOutbound(ctx, ids)
}

func (s *Store) dropOutbound(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	res := s.q(ctx).Exec(`DELETE FROM outbound_queue WHERE message_id IN ?`, uniq(ids))
	if res.Error != nil {
		return translate(res.Error, "drop outbound")
	}
	s.leftOutbound(int(res.RowsAffected))
	return nil
}

// enqueueOutbound puts stored messages into the outbound queue, due at their send_at, or at once.
func (s *Store) enqueueOutbound(ctx context.Context, msgs []Message) error {
	type row struct {
		MessageID string
		DueAt     time.Time
		Attempts  int
	}
	var rows []row
	for i := range msgs {
		if msgs[i].Direction == DirectionOutbound && (msgs[i].Status == StatusQueued || msgs[i].Status == StatusScheduled) {
			rows = append(rows, row{MessageID: msgs[i].ID, DueAt: queuedSince(&msgs[i]).UTC()})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	if err := s.q(ctx).Table("outbound_queue").CreateInBatches(&rows, 1000).Error; err != nil {
		return translate(err, "enqueue outbound")
	}
	s.wake(WakeOutbound)
	return nil
}

// OutboundQueueLength counts the messages in the outbound queue; with dueBy, only those due by then
// (their due time come and their lease, if any, over).
func (s *Store) OutboundQueueLength(ctx context.Context, dueBy *time.Time) (int64, error) {
	q := s.q(ctx).Table("outbound_queue")
	if dueBy != nil {
		q = q.Where("due_at <= ? AND "+notLeased, dueBy.UTC(), dueBy.UTC())
	}
	var n int64
	err := q.Count(&n).Error
	return n, translate(err, "count outbound queue")
}

// NextOutboundDue is when the outbound queue's next row is due (the later of its due time and the
// end of its lease); nil when the queue is empty.
func (s *Store) NextOutboundDue(ctx context.Context) (*time.Time, error) {
	var free, leased []time.Time
	if err := s.q(ctx).Raw(`SELECT due_at FROM outbound_queue WHERE leased_until IS NULL OR leased_until <= due_at
		ORDER BY due_at LIMIT 1`).Scan(&free).Error; err != nil {
		return nil, translate(err, "next outbound due")
	}
	if err := s.q(ctx).Raw(`SELECT leased_until FROM outbound_queue WHERE leased_until > due_at
		ORDER BY leased_until LIMIT 1`).Scan(&leased).Error; err != nil {
		return nil, translate(err, "next outbound due")
	}
	return earliest(free, leased), nil
}

// earliest is the earliest of the times in lists, in UTC; nil when there is none.
func earliest(lists ...[]time.Time) *time.Time {
	var out *time.Time
	for _, l := range lists {
		for _, t := range l {
			if out == nil || t.Before(*out) {
				t := t.UTC()
				out = &t
			}
		}
	}
	return out
}

// RequeueMessage puts an outbound message that still has to be sent into the outbound queue, due
// at due, unless it is there already.
func (s *Store) RequeueMessage(ctx context.Context, id string, due time.Time) error {
	res := s.q(ctx).Exec(`INSERT INTO outbound_queue (message_id, due_at)
		SELECT id, ? FROM messages WHERE id = ? AND direction = ? AND status IN ?
		ON CONFLICT (message_id) DO NOTHING`, due.UTC(), id, DirectionOutbound, []string{StatusQueued, StatusScheduled, StatusSending})
	if res.Error != nil {
		return translate(res.Error, "requeue message "+id)
	}
	if res.RowsAffected > 0 {
		s.wake(WakeOutbound)
	}
	return nil
}
