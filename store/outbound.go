package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm/clause"
)

// The outbound path works messages in batches: a dispatcher claims a batch of the outbound queue
// in one statement (outbound_queue.go), and records the submissions it made in one; receipts
// are recorded in batches too, each with everything that goes with it (FinishOutbound). These
// statements are the store's side of the carriers' work.

// Submitted is a message its carrier accepted, with the carrier's id of it ("" when the carrier
// gave none).
type Submitted struct {
	ID        string `json:"id"`
	CarrierID string `json:"cid"`
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

// Finished is an outbound message as its outcome left it, with its contact, number and
// attachments (without their bytes) for its events.
type Finished struct {
	MessageView
	// WasSending is true when the message was still `sending`: the outcome overtook the record of
	// its submission (the carrier answered before the dispatch wrote down that it had accepted the
	// message), so the same statement recorded the sent step too, sent_at at the outcome's time.
	// The caller announces message.sent before the outcome.
	WasSending bool
}

// OutcomeRules are what FinishOutbound applies with the outcomes besides the messages' states.
type OutcomeRules struct {
	// BlockReasons are the failure reasons that block the recipient for the account, for
	// BlockFor from the failure; a delivery lifts the account's block on its recipient.
	BlockReasons []string
	BlockFor     time.Duration
}

// FinishOutbound records the outcomes of outbound messages that are `sending` or `sent`, with
// everything that goes with them, in one transaction: each message's new state (an outcome is
// never dated before the message's sent_at; a carrier's clock, or a receipt that waited, can say
// so), the blocks set by hard failures and lifted by deliveries (rules), and the events that
// events returns for the finished messages, with their webhook deliveries. finished[i] is
// outs[i]'s message as it now is, or nil when it was not waiting for one (unknown, inbound,
// already final, or named twice: carriers repeat receipts). On SQLite the messages leave the
// outbound queue in the same transaction. On PostgreSQL it is two statements, the second sent
// with the commit, and a message's queue row is left to the dispatch: the record of its submission
// (RecordSent) deletes it, and should that never come (its dispatcher died), the claim after the
// lease finds the message final and drops it (Messages.settle). A message that is `sent` has no
// row left but in that case, so the statement does not look for one: it spares an index probe a
// message, and the statement's plans no longer depend on the outbound queue, whose every VACUUM
// dropped them.
func (s *Store) FinishOutbound(ctx context.Context, outs []Outcome, rules OutcomeRules,
	events func(finished []*Finished) ([]Event, error)) error {
	if len(outs) == 0 {
		return nil
	}
	if s.dialect == Postgres && !s.inTx() {
		return s.finishOutboundPG(ctx, outs, rules, events)
	}
	return s.Tx(ctx, func(tx *Store) error {
		rows, err := tx.finishOutboundSQLite(ctx, outs)
		if err != nil {
			return err
		}
		fin, err := tx.finishedViews(ctx, outs, rows)
		if err != nil {
			return err
		}
		var delivered []Finished
		for _, f := range fin {
			if f == nil {
				continue
			}
			switch {
			case f.Status == StatusDelivered:
				delivered = append(delivered, *f)
			case f.FailureReason != nil && slices.Contains(rules.BlockReasons, *f.FailureReason):
				if err := tx.BlockNumber(ctx, BlockedNumber{AccountID: f.AccountID, PhoneNumber: f.ToNumber, Reason: *f.FailureReason,
					BlockedAt: *f.FailedAt, RetryAfter: f.FailedAt.Add(rules.BlockFor)}); err != nil {
					return err
				}
			}
		}
		for _, f := range delivered {
			if err := tx.UnblockNumber(ctx, f.AccountID, f.ToNumber); err != nil {
				return err
			}
		}
		if err := tx.dropOutbound(ctx, idsOf(outs, func(o Outcome) string { return o.ID })); err != nil {
			return err
		}
		evs, err := events(fin)
		if err != nil {
			return err
		}
		return tx.InsertEvents(ctx, evs)
	})
}

// finishedViews completes the finished rows with their contacts, numbers and attachments, aligned
// with outs (nil for an outcome that finished nothing; a repeat in the same batch changed nothing).
func (s *Store) finishedViews(ctx context.Context, outs []Outcome, rows []Finished) ([]*Finished, error) {
	msgs := make([]Message, len(rows))
	for i := range rows {
		msgs[i] = rows[i].Message
	}
	views, err := s.MessageViews(ctx, msgs)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		rows[i].MessageView = views[i]
	}
	return alignFinished(outs, rows), nil
}

func alignFinished(outs []Outcome, rows []Finished) []*Finished {
	res := make([]*Finished, len(outs))
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
	return res
}

// finishOutboundSQLite updates the messages one by one; the transaction holds SQLite's write
// lock, so what is read first is still current.
func (s *Store) finishOutboundSQLite(ctx context.Context, outs []Outcome) ([]Finished, error) {
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
	var rows []Finished
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
			rows = append(rows, Finished{MessageView: MessageView{Message: m}, WasSending: wasSending[m.ID]})
		}
	}
	return rows, nil
}

// finishOutboundPG is FinishOutbound in two statements. The first reads the messages' status
// (which RETURNING cannot show as it was), updates them in id order, sets and lifts blocks, and
// returns them with their contacts and numbers, in no particular order (alignFinished puts them
// in the order of outs, which the events follow: sorting the wide rows again cost 0.07 ms a
// statement of 86); the second records the events, with the commit.
//
// The first statement finds each message by the row version that its snapshot read (ctid: one
// walk of the primary key, not two) and updates it only if its status is still the one read, so
// that was_sending is true. A message that a concurrent statement changed after the snapshot
// (the dispatch recording it sent, another instance recording its receipt) is then not updated:
// the update, waiting for that statement's lock, finds the row's status changed (or the row's
// newest version is one the snapshot does not see). The statement stops itself when it updated
// fewer messages than it read (its guard divides by zero), and the transaction is rolled back
// and runs again with a snapshot that sees the change. Reading without FOR UPDATE spares a lock,
// and its WAL record, per message.
func (s *Store) finishOutboundPG(ctx context.Context, outs []Outcome, rules OutcomeRules, events func([]*Finished) ([]Event, error)) error {
	n := len(outs)
	ids, status, reason, cid := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	at := make([]time.Time, n)
	for i, o := range outs {
		ids[i], status[i], reason[i], cid[i], at[i] = o.ID, o.Status, o.Reason, o.CarrierID, o.At.UTC()
	}
	q := `WITH v AS (SELECT DISTINCT ON (id) * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[])
				AS v(id, status, at, reason, cid) ORDER BY id),
		w AS (SELECT m.ctid AS tid, m.status AS was, v.* FROM messages m JOIN v ON v.id = m.id
			WHERE m.direction = 'outbound' AND m.status IN ('sending', 'sent') ORDER BY m.id),
		u AS (UPDATE messages AS m SET status = w.status, updated_at = GREATEST(w.at, m.sent_at), sent_at = COALESCE(m.sent_at, w.at),
				delivered_at = CASE WHEN w.status = 'delivered' THEN GREATEST(w.at, m.sent_at) ELSE m.delivered_at END,
				failed_at = CASE WHEN w.status = 'failed' THEN GREATEST(w.at, m.sent_at) ELSE m.failed_at END,
				failure_reason = CASE WHEN w.status = 'failed' THEN w.reason ELSE m.failure_reason END,
				carrier_id = COALESCE(m.carrier_id, NULLIF(w.cid, ''))
			FROM w WHERE m.ctid = w.tid AND m.status = w.was
			RETURNING m.*, w.was = 'sending' AS was_sending),
		bl AS (INSERT INTO blocked_numbers (account_id, phone_number, reason, blocked_at, retry_after)
			SELECT DISTINCT ON (account_id, to_number) account_id, to_number, failure_reason, failed_at, failed_at + $7::interval
			FROM u WHERE status = 'failed' AND failure_reason = ANY($6)
			ORDER BY account_id, to_number, failed_at DESC
			ON CONFLICT (account_id, phone_number) DO UPDATE SET reason = excluded.reason, blocked_at = excluded.blocked_at,
				retry_after = excluded.retry_after),
		ub AS (DELETE FROM blocked_numbers b USING u WHERE u.status = 'delivered' AND b.account_id = u.account_id
			AND b.phone_number = u.to_number)
		SELECT ` + colsOf("u", messageCols) + `, u.was_sending, ` + colsOf("k", contactCols) + `, ` + colsOf("pn", numberCols) + `
		FROM u JOIN contacts k ON k.id = u.contact_id JOIN phone_numbers pn ON pn.id = u.phone_number_id
		WHERE 1 / CASE WHEN (SELECT COUNT(*) FROM u) = (SELECT COUNT(*) FROM w) THEN 1 ELSE 0 END = 1`
	slots := deliverySlots
	for races := 0; ; {
		made := false
		err := s.pgxConn(ctx, func(c *pgx.Conn) error {
			return pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
				rows, err := tx.Query(ctx, q, ids, status, at, reason, cid, rules.BlockReasons, rules.BlockFor)
				if err != nil {
					return err
				}
				got := make([]Finished, 0, n) // at most one a message; scanned in place
				var mms []string
				// The rows of one sender and account repeat their text (textInterner).
				var texts textInterner
				var dest []any
				for rows.Next() {
					got = append(got, Finished{})
					f := &got[len(got)-1]
					dest = append(appendMessageDest(dest[:0], &f.Message), &f.WasSending)
					dest = appendNumberDest(appendContactDest(dest, &f.Contact), &f.PhoneNumber)
					if err := texts.scan(rows, dest); err != nil {
						rows.Close()
						return err
					}
					utcMessage(&f.Message)
					utcContact(&f.Contact)
					utcNumber(&f.PhoneNumber)
					if f.Type != "sms" {
						mms = append(mms, f.ID)
					}
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					if isDivisionByZero(err) {
						return errReceiptRaced
					}
					return err
				}
				if len(mms) > 0 {
					if err := attachmentsPG(ctx, tx, mms, got); err != nil {
						return err
					}
				}
				evs, err := events(alignFinished(outs, got))
				if err != nil {
					return err
				}
				if len(evs) == 0 {
					return nil
				}
				now := time.Now().UTC().Truncate(time.Microsecond)
				prepareEvents(ctx, evs, now)
				var n int64
				stmt := "WITH " + eventsFanout(1, slots[0], "") + eventsGuard
				if err := tx.QueryRow(ctx, stmt, newEventArrays(evs, slots[0]).args(now)...).Scan(&n); err != nil {
					if isDivisionByZero(err) {
						return errFewDeliveryIDs
					}
					return err
				}
				made = n > 0
				return nil
			})
		})
		if err == nil && made {
			// After the commit: a deliverer woken before it could claim before the deliveries
			// are visible, and then wait for the next wake-up or its poll.
			s.wake(WakeWebhooks)
		}
		switch {
		case errors.Is(err, errReceiptRaced) && races < 3:
			races++
		case errors.Is(err, errFewDeliveryIDs) && len(slots) > 1:
			slots = slots[1:]
		case errors.Is(err, errFewDeliveryIDs):
			return errors.New("store: finish messages: a project has more than 128 webhook endpoints for one event type")
		default:
			return translate(err, "finish messages")
		}
	}
}

// errReceiptRaced and errFewDeliveryIDs are why finishOutboundPG runs its transaction again: a
// message changed between the statement's snapshot and its lock, or an event has more endpoints
// than delivery ids.
var (
	errReceiptRaced   = errors.New("store: a message changed while its outcome was recorded")
	errFewDeliveryIDs = errors.New("store: an event has more webhook endpoints than delivery ids")
)

// isDivisionByZero reports whether err is PostgreSQL's division by zero, with which the store's
// statements stop themselves (eventsGuard, the receipt statement's guard).
func isDivisionByZero(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "22012"
}

// attachmentsPG completes messages with their attachments (without their bytes), in order.
func attachmentsPG(ctx context.Context, tx pgx.Tx, ids []string, views []Finished) error {
	rows, err := tx.Query(ctx, `SELECT id, project_id, message_id, position, url, type, content_type, size, fetched_at, unavailable_at
		FROM attachments WHERE message_id = ANY($1) ORDER BY message_id, position`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	byMsg := map[string][]Attachment{}
	for rows.Next() {
		var a Attachment
		if err := rows.Scan(&a.ID, &a.ProjectID, &a.MessageID, &a.Position, &a.URL, &a.Type, &a.ContentType, &a.Size,
			&a.FetchedAt, &a.UnavailableAt); err != nil {
			return err
		}
		byMsg[a.MessageID] = append(byMsg[a.MessageID], a)
	}
	for i := range views {
		views[i].Attachments = byMsg[views[i].ID]
	}
	return rows.Err()
}
