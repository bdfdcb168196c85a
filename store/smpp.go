package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// The SMPP adapter's tables (migration 0008): what carriers/smpp must find again after a
// restart. Submissions are keyed by our reference (the message id); each part is a row that
// receives the SMSC's message id when the SMSC accepts it and its fate when a receipt arrives.

// States of an SMPP part.
const (
	// SMPPPartPending has not been accepted by the SMSC (yet).
	SMPPPartPending = "pending"
	// SMPPPartSubmitted was accepted: its SMSCID is known.
	SMPPPartSubmitted = "submitted"
	// SMPPPartDelivered and SMPPPartFailed are final, as a receipt told them.
	SMPPPartDelivered = "delivered"
	SMPPPartFailed    = "failed"
)

// SMPPSubmission is a message submitted over SMPP, in Parts concatenated parts that share
// ConcatRef in their user data header.
type SMPPSubmission struct {
	Reference string `gorm:"primaryKey"`
	ConcatRef int
	Parts     int
	// ReportedAt is set once the core accepted the message's final receipt.
	ReportedAt *time.Time
	CreatedAt  time.Time
}

// TableName is the submissions table.
func (SMPPSubmission) TableName() string { return "smpp_submissions" }

// SMPPPart is one part (1-based) of a submission.
type SMPPPart struct {
	Reference string `gorm:"primaryKey"`
	Part      int    `gorm:"primaryKey"`
	// SMSCID is the message id the SMSC gave the part in its submit_sm_resp.
	SMSCID *string `gorm:"column:smsc_id"`
	// Status is one of the SMPPPart* states.
	Status        string
	FailureReason *string
	DoneAt        *time.Time
}

// TableName is the parts table.
func (SMPPPart) TableName() string { return "smpp_parts" }

// SMPPInboundPart is one part of a concatenated inbound message, kept until the last arrives.
type SMPPInboundPart struct {
	Source      string `gorm:"primaryKey"`
	Destination string `gorm:"primaryKey"`
	ConcatRef   int    `gorm:"primaryKey"`
	Total       int    `gorm:"primaryKey"`
	Part        int    `gorm:"primaryKey"`
	Body        string
	CreatedAt   time.Time
}

// TableName is the inbound parts table.
func (SMPPInboundPart) TableName() string { return "smpp_inbound_parts" }

// BeginSMPPSubmission records a submission and its pending parts, unless its reference is
// recorded already; either way it returns the submission as stored with its parts in order.
func (s *Store) BeginSMPPSubmission(ctx context.Context, sub SMPPSubmission) (*SMPPSubmission, []SMPPPart, error) {
	var stored SMPPSubmission
	var parts []SMPPPart
	err := s.q(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&sub)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 1 {
			parts = make([]SMPPPart, sub.Parts)
			for i := range parts {
				parts[i] = SMPPPart{Reference: sub.Reference, Part: i + 1, Status: SMPPPartPending}
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
	return &stored, parts, nil
}

// SetSMPPPartID records the SMSC's id of an accepted part. A receipt that overtook the
// submit_sm_resp has already decided the part's state, which this keeps.
func (s *Store) SetSMPPPartID(ctx context.Context, reference string, part int, smscID string) error {
	err := s.q(ctx).Model(&SMPPPart{}).Where("reference = ? AND part = ?", reference, part).
		Updates(map[string]any{"smsc_id": smscID,
			"status": gorm.Expr("CASE WHEN status = ? THEN ? ELSE status END", SMPPPartPending, SMPPPartSubmitted)}).Error
	return translate(err, "set smpp part id")
}

// FindSMPPPart returns the part that the SMSC gave one of ids (the forms an SMSC may write one id
// in), the most recently submitted when ids repeat; ErrNotFound when none.
func (s *Store) FindSMPPPart(ctx context.Context, ids []string) (*SMPPPart, error) {
	var p SMPPPart
	err := s.q(ctx).Joins("JOIN smpp_submissions ON smpp_submissions.reference = smpp_parts.reference").
		Where("smpp_parts.smsc_id IN ?", ids).Order("smpp_submissions.created_at DESC").Take(&p).Error
	if err != nil {
		return nil, translate(err, "find smpp part")
	}
	return &p, nil
}

// FinishSMPPPart records a part's fate as a receipt told it (status SMPPPartDelivered or
// SMPPPartFailed with reason; a part keeps its first fate), and its SMSC id when the receipt
// overtook the record of it, and returns the submission with all its parts, so the caller can
// tell whether the message's fate is known.
func (s *Store) FinishSMPPPart(ctx context.Context, reference string, part int, smscID, status, reason string, at time.Time) (*SMPPSubmission, []SMPPPart, error) {
	var sub SMPPSubmission
	var parts []SMPPPart
	err := s.q(ctx).Transaction(func(tx *gorm.DB) error {
		set := map[string]any{"status": status, "done_at": at, "smsc_id": gorm.Expr("COALESCE(smsc_id, ?)", smscID)}
		if reason != "" {
			set["failure_reason"] = reason
		}
		if err := tx.Model(&SMPPPart{}).Where("reference = ? AND part = ? AND status IN ?", reference, part,
			[]string{SMPPPartPending, SMPPPartSubmitted}).Updates(set).Error; err != nil {
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
	return &sub, parts, nil
}

// MarkSMPPReported records that the core accepted a submission's final receipt.
func (s *Store) MarkSMPPReported(ctx context.Context, reference string, at time.Time) error {
	err := s.q(ctx).Model(&SMPPSubmission{}).Where("reference = ? AND reported_at IS NULL", reference).
		Update("reported_at", at).Error
	return translate(err, "mark smpp submission reported")
}

// AddSMPPInboundPart keeps one part of a concatenated inbound message (a part received again is
// kept once) and returns the parts of its message received so far, in order. Parts of messages
// that never completed are dropped after staleAfter.
func (s *Store) AddSMPPInboundPart(ctx context.Context, p SMPPInboundPart, staleAfter time.Duration) ([]SMPPInboundPart, error) {
	var parts []SMPPInboundPart
	err := s.q(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("created_at < ?", p.CreatedAt.Add(-staleAfter)).Delete(&SMPPInboundPart{}).Error; err != nil {
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
	return parts, nil
}

// DeleteSMPPInbound forgets the parts of a concatenated inbound message once it was reported.
func (s *Store) DeleteSMPPInbound(ctx context.Context, source, destination string, concatRef, total int) error {
	err := s.q(ctx).Where("source = ? AND destination = ? AND concat_ref = ? AND total = ?", source, destination, concatRef, total).
		Delete(&SMPPInboundPart{}).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		err = nil
	}
	return translate(err, "delete smpp inbound message")
}
