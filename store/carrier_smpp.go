package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard/switchboard/carriers/smpp"
)

// SMPPStore keeps the SMPP adapter's state in the smpp_* tables (migration 0009): submissions
// keyed by our reference (the message id), each part a row that receives the SMSC's message id
// when the SMSC accepts it and its fate when a receipt arrives. It implements smpp.Store.
type SMPPStore struct{ s *Store }

// SMPP returns what the SMPP adapter keeps in this database.
func (s *Store) SMPP() *SMPPStore { return &SMPPStore{s: s} }

var _ smpp.Store = (*SMPPStore)(nil)

// smppSubmission is a row of smpp_submissions.
type smppSubmission struct {
	Reference  string `gorm:"primaryKey"`
	ConcatRef  int
	Parts      int
	ReportedAt *time.Time
	CreatedAt  time.Time
}

func (smppSubmission) TableName() string { return "smpp_submissions" }

func (r smppSubmission) out() *smpp.Submission {
	return &smpp.Submission{Reference: r.Reference, ConcatRef: r.ConcatRef, Parts: r.Parts, ReportedAt: r.ReportedAt, CreatedAt: r.CreatedAt}
}

// smppPart is a row of smpp_parts.
type smppPart struct {
	Reference     string  `gorm:"primaryKey"`
	Part          int     `gorm:"primaryKey"`
	SMSCID        *string `gorm:"column:smsc_id"`
	Status        string
	FailureReason *string
	DoneAt        *time.Time
}

func (smppPart) TableName() string { return "smpp_parts" }

func (r smppPart) out() smpp.Part {
	return smpp.Part{Reference: r.Reference, Part: r.Part, SMSCID: r.SMSCID, Status: r.Status, FailureReason: r.FailureReason, DoneAt: r.DoneAt}
}

func smppParts(rows []smppPart) []smpp.Part {
	out := make([]smpp.Part, len(rows))
	for i, r := range rows {
		out[i] = r.out()
	}
	return out
}

// smppInboundPart is a row of smpp_inbound_parts.
type smppInboundPart struct {
	Source      string `gorm:"primaryKey"`
	Destination string `gorm:"primaryKey"`
	ConcatRef   int    `gorm:"primaryKey"`
	Total       int    `gorm:"primaryKey"`
	Part        int    `gorm:"primaryKey"`
	Body        string
	CreatedAt   time.Time
}

func (smppInboundPart) TableName() string { return "smpp_inbound_parts" }

// BeginSubmission records a submission and its pending parts (see smpp.Store).
func (x *SMPPStore) BeginSubmission(ctx context.Context, in smpp.Submission) (*smpp.Submission, []smpp.Part, error) {
	sub := smppSubmission{Reference: in.Reference, ConcatRef: in.ConcatRef, Parts: in.Parts, CreatedAt: in.CreatedAt}
	var stored smppSubmission
	var parts []smppPart
	err := x.s.q(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&sub)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 1 {
			parts = make([]smppPart, sub.Parts)
			for i := range parts {
				parts[i] = smppPart{Reference: sub.Reference, Part: i + 1, Status: smpp.PartPending}
			}
			stored = sub
			return tx.Create(&parts).Error
		}
		if err := tx.Where("reference = ?", sub.Reference).Take(&stored).Error; err != nil {
			return err
		}
		return tx.Where("reference = ?", sub.Reference).Order("part").Find(&parts).Error
	})
	if err != nil {
		return nil, nil, translate(err, "begin smpp submission "+sub.Reference)
	}
	return stored.out(), smppParts(parts), nil
}

// SetPartID records the SMSC's id of an accepted part (see smpp.Store).
func (x *SMPPStore) SetPartID(ctx context.Context, reference string, part int, smscID string) error {
	err := x.s.q(ctx).Model(&smppPart{}).Where("reference = ? AND part = ?", reference, part).
		Updates(map[string]any{"smsc_id": smscID,
			"status": gorm.Expr("CASE WHEN status = ? THEN ? ELSE status END", smpp.PartPending, smpp.PartSubmitted)}).Error
	return translate(err, "set smpp part id")
}

// FindPart returns the part that the SMSC gave one of ids (see smpp.Store).
func (x *SMPPStore) FindPart(ctx context.Context, ids []string) (*smpp.Part, error) {
	var p smppPart
	err := x.s.q(ctx).Joins("JOIN smpp_submissions ON smpp_submissions.reference = smpp_parts.reference").
		Where("smpp_parts.smsc_id IN ?", ids).Order("smpp_submissions.created_at DESC").Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err, "find smpp part")
	}
	out := p.out()
	return &out, nil
}

// FinishPart records a part's fate as a receipt told it (see smpp.Store).
func (x *SMPPStore) FinishPart(ctx context.Context, reference string, part int, smscID, status, reason string, at time.Time) (*smpp.Submission, []smpp.Part, error) {
	var sub smppSubmission
	var parts []smppPart
	err := x.s.q(ctx).Transaction(func(tx *gorm.DB) error {
		set := map[string]any{"status": status, "done_at": at, "smsc_id": gorm.Expr("COALESCE(smsc_id, ?)", smscID)}
		if reason != "" {
			set["failure_reason"] = reason
		}
		if err := tx.Model(&smppPart{}).Where("reference = ? AND part = ? AND status IN ?", reference, part,
			[]string{smpp.PartPending, smpp.PartSubmitted}).Updates(set).Error; err != nil {
			return err
		}
		if err := tx.Where("reference = ?", reference).Take(&sub).Error; err != nil {
			return err
		}
		return tx.Where("reference = ?", reference).Order("part").Find(&parts).Error
	})
	if err != nil {
		return nil, nil, translate(err, "finish smpp part")
	}
	return sub.out(), smppParts(parts), nil
}

// MarkReported records that the core accepted a submission's final receipt.
func (x *SMPPStore) MarkReported(ctx context.Context, reference string, at time.Time) error {
	err := x.s.q(ctx).Model(&smppSubmission{}).Where("reference = ? AND reported_at IS NULL", reference).
		Update("reported_at", at).Error
	return translate(err, "mark smpp submission reported")
}

// AddInboundPart keeps one part of a concatenated inbound message (see smpp.Store).
func (x *SMPPStore) AddInboundPart(ctx context.Context, in smpp.InboundPart, staleAfter time.Duration) ([]smpp.InboundPart, error) {
	p := smppInboundPart(in)
	var parts []smppInboundPart
	err := x.s.q(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("created_at < ?", p.CreatedAt.Add(-staleAfter)).Delete(&smppInboundPart{}).Error; err != nil {
			return err
		}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&p).Error; err != nil {
			return err
		}
		return tx.Where("source = ? AND destination = ? AND concat_ref = ? AND total = ?", p.Source, p.Destination, p.ConcatRef, p.Total).
			Order("part").Find(&parts).Error
	})
	if err != nil {
		return nil, translate(err, "add smpp inbound part")
	}
	out := make([]smpp.InboundPart, len(parts))
	for i, r := range parts {
		out[i] = smpp.InboundPart(r)
	}
	return out, nil
}

// DeleteInbound forgets the parts of a concatenated inbound message once it was reported.
func (x *SMPPStore) DeleteInbound(ctx context.Context, source, destination string, concatRef, total int) error {
	err := x.s.q(ctx).Where("source = ? AND destination = ? AND concat_ref = ? AND total = ?", source, destination, concatRef, total).
		Delete(&smppInboundPart{}).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		err = nil
	}
	return translate(err, "delete smpp inbound message")
}

// smppNumber is a row of smpp_numbers.
type smppNumber struct {
	Number  string `gorm:"primaryKey"`
	Type    string
	Country string
	AddedAt time.Time
	TakenAt *time.Time
}

func (smppNumber) TableName() string { return "smpp_numbers" }

// AddPoolNumbers adds numbers to the SMPP route's inventory, keeping those there already.
func (x *SMPPStore) AddPoolNumbers(ctx context.Context, ns []smpp.PoolNumber) error {
	if len(ns) == 0 {
		return nil
	}
	rows := make([]smppNumber, len(ns))
	for i, n := range ns {
		rows[i] = smppNumber{Number: n.Number, Type: n.Type, Country: n.Country, AddedAt: n.AddedAt}
	}
	return translate(x.s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error, "add smpp numbers")
}

// RemovePoolNumber takes a number out of the inventory unless an account holds it.
func (x *SMPPStore) RemovePoolNumber(ctx context.Context, number string) (bool, error) {
	res := x.s.q(ctx).Where("number = ? AND taken_at IS NULL", number).Delete(&smppNumber{})
	return res.RowsAffected == 1, translate(res.Error, "remove smpp number")
}

// PoolNumbers lists the inventory by number.
func (x *SMPPStore) PoolNumbers(ctx context.Context) ([]smpp.PoolNumber, error) {
	var rows []smppNumber
	if err := x.s.q(ctx).Order("number").Find(&rows).Error; err != nil {
		return nil, translate(err, "smpp numbers")
	}
	return smppPoolNumbers(rows), nil
}

// FreePoolNumbers lists free numbers of a type and country starting with +1 and prefix.
func (x *SMPPStore) FreePoolNumbers(ctx context.Context, typ, country, prefix string, limit int) ([]smpp.PoolNumber, error) {
	var rows []smppNumber
	err := x.s.q(ctx).Where("taken_at IS NULL AND type = ? AND country = ? AND number LIKE ?", typ, country, "+1"+prefix+"%").
		Order("number").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, translate(err, "free smpp numbers")
	}
	return smppPoolNumbers(rows), nil
}

// TakePoolNumber marks a free number held.
func (x *SMPPStore) TakePoolNumber(ctx context.Context, number string, at time.Time) (bool, error) {
	res := x.s.q(ctx).Model(&smppNumber{}).Where("number = ? AND taken_at IS NULL", number).Update("taken_at", at)
	return res.RowsAffected == 1, translate(res.Error, "take smpp number")
}

// ReturnPoolNumber marks a number free again.
func (x *SMPPStore) ReturnPoolNumber(ctx context.Context, number string) error {
	return translate(x.s.q(ctx).Model(&smppNumber{}).Where("number = ?", number).Update("taken_at", nil).Error, "return smpp number")
}

func smppPoolNumbers(rows []smppNumber) []smpp.PoolNumber {
	out := make([]smpp.PoolNumber, len(rows))
	for i, r := range rows {
		out[i] = smpp.PoolNumber(r)
	}
	return out
}
