package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard/switchboard/carriers/sim"
)

// SimStore keeps the simulated carrier's world in the sim_* tables (migrations 0003 and 0004); it
// implements sim.Store.
type SimStore struct{ s *Store }

// Sim returns what the simulated carrier keeps in this database.
func (s *Store) Sim() *SimStore { return &SimStore{s: s} }

var _ sim.Store = (*SimStore)(nil)

// simNumber is a number the simulated carrier has provisioned to the installation.
type simNumber struct {
	Number        string `gorm:"primaryKey"`
	ProvisionedAt time.Time
}

func (simNumber) TableName() string { return "sim_numbers" }

// simReview is a row of sim_reviews.
type simReview struct {
	Reference   string `gorm:"primaryKey"`
	Description string
	TCRID       string `gorm:"column:tcr_id"`
	SubmittedAt time.Time
	DecidedAt   *time.Time
}

func (simReview) TableName() string { return "sim_reviews" }

func (r simReview) out() *sim.Review {
	return &sim.Review{Reference: r.Reference, Description: r.Description, TCRID: r.TCRID, SubmittedAt: r.SubmittedAt, DecidedAt: r.DecidedAt}
}

// simOutbox is a row of sim_outbox.
type simOutbox struct {
	Reference string `gorm:"primaryKey"`
	CarrierID string
	From      string `gorm:"column:from_number"`
	To        string `gorm:"column:to_number"`
	Body      string
	Parts     int
	Encoding  string
	Media     []string `gorm:"serializer:json"`
	Outcome   string
	CreatedAt time.Time
}

func (simOutbox) TableName() string { return "sim_outbox" }

// ProvisionedAmong returns those of numbers that the simulator has provisioned.
func (x *SimStore) ProvisionedAmong(ctx context.Context, numbers []string) ([]string, error) {
	var taken []string
	err := x.s.q(ctx).Model(&simNumber{}).Where("number IN ?", numbers).Pluck("number", &taken).Error
	return taken, translate(err, "sim numbers")
}

// Provision records number as provisioned; false when it was already.
func (x *SimStore) Provision(ctx context.Context, number string, at time.Time) (bool, error) {
	res := x.s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&simNumber{Number: number, ProvisionedAt: at})
	return res.RowsAffected == 1, translate(res.Error, "provision sim number")
}

// Unprovision forgets a provisioned number.
func (x *SimStore) Unprovision(ctx context.Context, number string) error {
	return translate(x.s.q(ctx).Where("number = ?", number).Delete(&simNumber{}).Error, "unprovision sim number")
}

// SubmitReview records or amends a submission for review (see sim.Store).
func (x *SimStore) SubmitReview(ctx context.Context, r sim.Review, job river.JobArgs, opts *river.InsertOpts) error {
	row := simReview{Reference: r.Reference, Description: r.Description, TCRID: r.TCRID, SubmittedAt: r.SubmittedAt}
	return x.s.Tx(ctx, func(tx *Store) error {
		db := tx.q(ctx)
		res := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if res.Error != nil {
			return translate(res.Error, "record sim review")
		}
		if res.RowsAffected == 0 {
			// Amend a pending review: the conditional update re-checks decided_at under the row's
			// lock, so an amendment racing a decision either lands before it or gets a new review.
			fields := map[string]any{"description": r.Description, "tcr_id": r.TCRID, "submitted_at": r.SubmittedAt}
			pending := db.Model(&simReview{}).Where("reference = ? AND decided_at IS NULL", r.Reference).Updates(fields)
			if pending.Error != nil {
				return translate(pending.Error, "amend sim review")
			}
			if pending.RowsAffected > 0 {
				return nil // the pending review judges the amendment
			}
			fields["decided_at"] = nil
			if err := db.Model(&simReview{}).Where("reference = ?", r.Reference).Updates(fields).Error; err != nil {
				return translate(err, "reopen sim review")
			}
		}
		return tx.InsertJob(ctx, job, opts)
	})
}

// DecideReview marks a pending review decided (see sim.Store).
func (x *SimStore) DecideReview(ctx context.Context, reference string, at time.Time) (*sim.Review, bool, error) {
	var (
		row   simReview
		fresh bool
	)
	err := x.s.Tx(ctx, func(tx *Store) error {
		q := tx.q(ctx)
		if tx.dialect == Postgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.Where("reference = ?", reference).Take(&row).Error; err != nil {
			return err
		}
		if row.DecidedAt != nil {
			return nil
		}
		fresh, row.DecidedAt = true, &at
		return tx.q(ctx).Model(&simReview{}).Where("reference = ?", reference).Update("decided_at", at).Error
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, translate(err, "decide sim review")
	}
	return row.out(), fresh, nil
}

// ReopenReview undoes the decision made at at, unless the review changed since.
func (x *SimStore) ReopenReview(ctx context.Context, reference string, at time.Time) error {
	err := x.s.q(ctx).Model(&simReview{}).Where("reference = ? AND decided_at = ?", reference, at).Update("decided_at", nil).Error
	return translate(err, "reopen sim review")
}

// Review returns the review of reference, nil when there is none.
func (x *SimStore) Review(ctx context.Context, reference string) (*sim.Review, error) {
	var row simReview
	err := x.s.q(ctx).Where("reference = ?", reference).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err, "sim review")
	}
	return row.out(), nil
}

// WithdrawReview forgets the review of reference.
func (x *SimStore) WithdrawReview(ctx context.Context, reference string) error {
	return translate(x.s.q(ctx).Where("reference = ?", reference).Delete(&simReview{}).Error, "withdraw sim review")
}

// simReceipts is a row of sim_receipts: the receipts of one batch of submissions.
type simReceipts struct {
	ID       int64 `gorm:"primaryKey"`
	DueAt    time.Time
	Receipts string
}

func (simReceipts) TableName() string { return "sim_receipts" }

// AddToOutbox puts entries into the outbox with the receipts then returns (see sim.Store).
func (x *SimStore) AddToOutbox(ctx context.Context, entries []*sim.OutboxEntry, then func(first map[string]string) ([]sim.OwedReceipt, time.Time)) (int64, error) {
	rows := make([]simOutbox, len(entries))
	refs := make([]string, len(entries))
	for i, e := range entries {
		rows[i] = simOutbox{Reference: e.Reference, CarrierID: e.CarrierID, From: e.From, To: e.To, Body: e.Body,
			Parts: e.Parts, Encoding: e.Encoding, Media: e.Media, Outcome: e.Outcome, CreatedAt: e.CreatedAt}
		if rows[i].Media == nil {
			rows[i].Media = []string{}
		}
		refs[i] = e.Reference
	}
	var id int64
	add := func(plain bool) error {
		return x.s.TxAsync(ctx, func(tx *Store) error {
			first, err := tx.addToOutbox(ctx, rows, refs, plain)
			if err != nil {
				return err
			}
			receipts, due := then(first)
			if id = 0; len(receipts) == 0 {
				return nil
			}
			id, err = tx.keepReceipts(ctx, receipts, due)
			return err
		})
	}
	// A plain insert first: a reference stored already (a repeated submission) or twice in the
	// batch is rare, and it fails the insert, which is then made again skipping those references.
	var err error
	if x.s.dialect == Postgres && !x.s.inTx() {
		id, err = x.outboxStatementPG(ctx, rows, refs, then)
	} else {
		err = add(true)
	}
	if errors.Is(err, ErrDuplicate) {
		err = add(false)
	}
	return id, err
}

// outboxStatementPG is AddToOutbox's plain insert on PostgreSQL, with the receipts, in one statement
// and so one round trip that commits without waiting for the disk (asyncCommitPG), as TxAsync
// does in five (BEGIN, SET LOCAL, the two inserts, COMMIT). A reference stored already fails it
// with ErrDuplicate.
func (x *SimStore) outboxStatementPG(ctx context.Context, rows []simOutbox, refs []string, then func(first map[string]string) ([]sim.OwedReceipt, time.Time)) (int64, error) {
	args, err := outboxArgs(rows, refs)
	if err != nil {
		return 0, err
	}
	first := make(map[string]string, len(rows))
	for _, r := range rows {
		first[r.Reference] = r.CarrierID
	}
	receipts, due := then(first)
	var id int64
	err = x.s.pgxConn(ctx, func(c *pgx.Conn) error {
		if len(receipts) == 0 {
			_, err := c.Exec(ctx, insertOutboxPG+" WHERE "+asyncCommitPG, args...)
			return err
		}
		b, err := json.Marshal(receipts)
		if err != nil {
			return fmt.Errorf("sim receipts: %w", err)
		}
		return c.QueryRow(ctx, `WITH o AS (`+insertOutboxPG+` WHERE `+asyncCommitPG+`)
			INSERT INTO sim_receipts (due_at, receipts) VALUES ($11, $12) RETURNING id`, append(args, due.UTC(), string(b))...).Scan(&id)
	})
	return id, translate(err, "add to sim outbox")
}

// asyncCommitPG is a condition, true, that makes the transaction of the statement it is in commit
// without waiting for the write-ahead log to reach the disk (PostgreSQL reads synchronous_commit
// when it commits, before a transaction's local settings end), for statements that run on their
// own and whose work TxAsync's rule allows to lose in a crash of the database.
const asyncCommitPG = `(SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL`

// keepReceipts inserts a batch of receipts due at due into sim_receipts and returns its id.
func (s *Store) keepReceipts(ctx context.Context, receipts []sim.OwedReceipt, due time.Time) (int64, error) {
	b, err := json.Marshal(receipts)
	if err != nil {
		return 0, fmt.Errorf("store: sim receipts: %w", err)
	}
	if tx := sqlTx(s.db); s.dialect == Postgres && tx != nil {
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO sim_receipts (due_at, receipts) VALUES ($1, $2) RETURNING id`, due.UTC(), string(b)).Scan(&id)
		return id, translate(err, "keep sim receipts")
	}
	row := simReceipts{DueAt: due.UTC(), Receipts: string(b)}
	return row.ID, translate(s.q(ctx).Create(&row).Error, "keep sim receipts")
}

// ForgetReceipts deletes kept receipts (see sim.Store), in a transaction that need not wait for
// the disk: receipts lost from the forgetting are reported again, which the core ignores.
func (x *SimStore) ForgetReceipts(ctx context.Context, ids []int64) error {
	if x.s.dialect == Postgres && !x.s.inTx() {
		// One statement (one text whatever the number of ids, planned once) that commits without
		// waiting for the disk.
		return translate(x.s.pgxConn(ctx, func(c *pgx.Conn) error {
			_, err := c.Exec(ctx, `DELETE FROM sim_receipts WHERE id = ANY($1::bigint[]) AND `+asyncCommitPG, ids)
			return err
		}), "forget sim receipts")
	}
	return x.s.TxAsync(ctx, func(tx *Store) error {
		return translate(tx.q(ctx).Exec(`DELETE FROM sim_receipts WHERE id IN ?`, ids).Error, "forget sim receipts")
	})
}

// ClaimReceipts claims kept receipts that came due (see sim.Store).
func (x *SimStore) ClaimReceipts(ctx context.Context, now, until time.Time, limit int) ([]sim.OwedReceipts, error) {
	var rows []simReceipts
	now, until = now.UTC(), until.UTC()
	var err error
	if x.s.dialect == Postgres {
		err = x.s.q(ctx).Raw(`UPDATE sim_receipts SET due_at = ? WHERE id IN (
				SELECT id FROM sim_receipts WHERE due_at <= ? ORDER BY due_at LIMIT ? FOR UPDATE SKIP LOCKED)
			RETURNING id, receipts`, until, now, limit).Scan(&rows).Error
	} else {
		// A look first, without the write lock that SQLite's transactions take at once: the sweep
		// mostly finds nothing.
		var due []int64
		if err := x.s.q(ctx).Model(&simReceipts{}).Where("due_at <= ?", now).Limit(1).Pluck("id", &due).Error; err != nil || len(due) == 0 {
			return nil, translate(err, "claim sim receipts")
		}
		err = x.s.Tx(ctx, func(tx *Store) error {
			if err := tx.q(ctx).Where("due_at <= ?", now).Order("due_at").Limit(limit).Find(&rows).Error; err != nil || len(rows) == 0 {
				return err
			}
			ids := make([]int64, len(rows))
			for i, r := range rows {
				ids[i] = r.ID
			}
			return tx.q(ctx).Model(&simReceipts{}).Where("id IN ?", ids).Update("due_at", until).Error
		})
	}
	if err != nil {
		return nil, translate(err, "claim sim receipts")
	}
	out := make([]sim.OwedReceipts, len(rows))
	for i, r := range rows {
		out[i].ID = r.ID
		if err := json.Unmarshal([]byte(r.Receipts), &out[i].Receipts); err != nil {
			return nil, fmt.Errorf("store: sim receipts %d: %w", r.ID, err)
		}
	}
	return out, nil
}

// addToOutbox inserts rows into the outbox, skipping references stored already, and returns the
// carrier id stored under each of refs. When plain, on PostgreSQL, it skips nothing: a reference
// stored already, or twice in rows, fails it with ErrDuplicate. The plain insert writes half the
// WAL records of one that skips (ON CONFLICT DO NOTHING inserts speculatively: each row is
// inserted, then confirmed by a record of its own). On PostgreSQL its statements have the same
// text whatever the batch's size (arrays through unnest), so that each connection prepares and
// plans them once: gorm's multi-row VALUES made a new statement for every batch size, planned
// afresh and crowding the hot paths' statements out of pgx's statement cache.
func (s *Store) addToOutbox(ctx context.Context, rows []simOutbox, refs []string, plain bool) (map[string]string, error) {
	if tx := sqlTx(s.db); s.dialect == Postgres && tx != nil {
		return addToOutboxPG(ctx, tx, rows, refs, plain)
	}
	var stored []simOutbox
	db := s.q(ctx)
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error; err != nil {
		return nil, translate(err, "add to sim outbox")
	}
	if err := db.Select("reference", "carrier_id").Where("reference IN ?", refs).Find(&stored).Error; err != nil {
		return nil, translate(err, "read sim outbox")
	}
	first := make(map[string]string, len(stored))
	for _, e := range stored {
		first[e.Reference] = e.CarrierID
	}
	return first, nil
}

// addToOutboxPG is addToOutbox on PostgreSQL, in the transaction tx.
func addToOutboxPG(ctx context.Context, tx *sql.Tx, rows []simOutbox, refs []string, plain bool) (map[string]string, error) {
	args, err := outboxArgs(rows, refs)
	if err != nil {
		return nil, err
	}
	first := make(map[string]string, len(refs))
	if plain {
		if _, err := tx.ExecContext(ctx, insertOutboxPG, args...); err != nil {
			return nil, translate(err, "add to sim outbox")
		}
		for _, r := range rows {
			first[r.Reference] = r.CarrierID
		}
		return first, nil
	}
	// The insert returns what it stored; only references it skipped (stored already, the rare
	// case of a repeated submission) are read back.
	stored, err := scanOutboxRefs(tx.QueryContext(ctx, insertOutboxPG+" ON CONFLICT DO NOTHING RETURNING reference, carrier_id", args...))
	if err != nil {
		return nil, translate(err, "add to sim outbox")
	}
	for _, e := range stored {
		first[e.Reference] = e.CarrierID
	}
	var skipped []string
	for _, ref := range refs {
		if _, ok := first[ref]; !ok {
			skipped = append(skipped, ref)
		}
	}
	if len(skipped) > 0 {
		// A join with the array, not reference = ANY($1): once the statement is prepared, the
		// generic plan of = ANY($1) cannot see how long the array is and scans the whole outbox.
		earlier, err := scanOutboxRefs(tx.QueryContext(ctx, `SELECT o.reference, o.carrier_id FROM unnest($1::text[]) AS r(reference)
				JOIN sim_outbox o ON o.reference = r.reference`, skipped))
		if err != nil {
			return nil, translate(err, "read sim outbox")
		}
		for _, e := range earlier {
			first[e.Reference] = e.CarrierID
		}
	}
	return first, nil
}

// outboxArgs are insertOutboxPG's arguments for rows, column by column.
func outboxArgs(rows []simOutbox, refs []string) ([]any, error) {
	n := len(rows)
	cols := struct {
		from, to, body, encoding, media, outcome, carrierID []string
		parts                                               []int64
		createdAt                                           []time.Time
	}{make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]int64, n), make([]time.Time, n)}
	for i, r := range rows {
		cols.media[i] = "[]" // most messages have none: no encoder run
		if len(r.Media) > 0 {
			media, err := json.Marshal(r.Media)
			if err != nil {
				return nil, fmt.Errorf("store: sim outbox media: %w", err)
			}
			cols.media[i] = string(media)
		}
		cols.carrierID[i], cols.from[i], cols.to[i], cols.body[i] = r.CarrierID, r.From, r.To, r.Body
		cols.parts[i], cols.encoding[i], cols.outcome[i], cols.createdAt[i] = int64(r.Parts), r.Encoding, r.Outcome, r.CreatedAt
	}
	return []any{refs, cols.carrierID, cols.from, cols.to, cols.body, cols.parts, cols.encoding, cols.media, cols.outcome, cols.createdAt}, nil
}

// insertOutboxPG inserts a batch of outbox entries, given column by column, on PostgreSQL.
const insertOutboxPG = `INSERT INTO sim_outbox (reference, carrier_id, from_number, to_number, body, parts, encoding, media, outcome, created_at)
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int8[], $7::text[], $8::text[], $9::text[], $10::timestamptz[])`

// scanOutboxRefs reads the references and carrier ids a query of the outbox returns.
func scanOutboxRefs(rs *sql.Rows, err error) ([]simOutbox, error) {
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []simOutbox
	for rs.Next() {
		var r simOutbox
		if err := rs.Scan(&r.Reference, &r.CarrierID); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// Outbox lists the outbox oldest first, only to one number when to is not empty.
func (x *SimStore) Outbox(ctx context.Context, to string) ([]sim.OutboxEntry, error) {
	q := x.s.q(ctx).Model(&simOutbox{})
	if to != "" {
		q = q.Where("to_number = ?", to)
	}
	var rows []simOutbox
	if err := q.Order("created_at, reference").Find(&rows).Error; err != nil {
		return nil, translate(err, "sim outbox")
	}
	out := make([]sim.OutboxEntry, len(rows))
	for i, r := range rows {
		out[i] = sim.OutboxEntry{Reference: r.Reference, CarrierID: r.CarrierID, From: r.From, To: r.To, Body: r.Body,
			Parts: r.Parts, Encoding: r.Encoding, Media: r.Media, Outcome: r.Outcome, CreatedAt: r.CreatedAt}
	}
	return out, nil
}
