package store

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard/switchboard/carriers/telnyx"
)

// TelnyxStore keeps the Telnyx adapter's state in the telnyx_* tables (migration 0017); it
// implements telnyx.Store.
type TelnyxStore struct{ s *Store }

// Telnyx returns what the Telnyx adapter keeps in this database.
func (s *Store) Telnyx() *TelnyxStore { return &TelnyxStore{s: s} }

var _ telnyx.Store = (*TelnyxStore)(nil)

type telnyxSubmission struct {
	Reference string `gorm:"primaryKey"`
	MessageID string
	CreatedAt time.Time
}

func (telnyxSubmission) TableName() string { return "telnyx_submissions" }

type telnyxBrand struct {
	AccountID string `gorm:"primaryKey"`
	BrandID   string
	CreatedAt time.Time
}

func (telnyxBrand) TableName() string { return "telnyx_brands" }

// SubmissionID returns the message id recorded under reference, "" when none.
func (x *TelnyxStore) SubmissionID(ctx context.Context, reference string) (string, error) {
	var r telnyxSubmission
	err := x.s.q(ctx).Where("reference = ?", reference).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	return r.MessageID, translate(err, "telnyx submission")
}

// AddSubmission records a message Telnyx accepted; a recorded reference keeps its first id.
func (x *TelnyxStore) AddSubmission(ctx context.Context, reference, id string, at time.Time) error {
	err := x.s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&telnyxSubmission{Reference: reference, MessageID: id, CreatedAt: at}).Error
	return translate(err, "record telnyx submission")
}

// ReferenceOf returns the reference a message id was recorded under, "" when none.
func (x *TelnyxStore) ReferenceOf(ctx context.Context, id string) (string, error) {
	var r telnyxSubmission
	err := x.s.q(ctx).Where("message_id = ?", id).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	return r.Reference, translate(err, "telnyx submission of message")
}

// InsertJob enqueues one of the adapter's jobs.
func (x *TelnyxStore) InsertJob(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error {
	return x.s.InsertJob(ctx, args, opts)
}

// BrandID returns an account's 10DLC brand, "" when none.
func (x *TelnyxStore) BrandID(ctx context.Context, accountID string) (string, error) {
	var r telnyxBrand
	err := x.s.q(ctx).Where("account_id = ?", accountID).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	return r.BrandID, translate(err, "telnyx brand")
}

// SetBrandID records an account's 10DLC brand.
func (x *TelnyxStore) SetBrandID(ctx context.Context, accountID, brandID string) error {
	err := x.s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&telnyxBrand{AccountID: accountID, BrandID: brandID, CreatedAt: now()}).Error
	return translate(err, "record telnyx brand")
}

// Registration returns a registration by reference, nil when none.
func (x *TelnyxStore) Registration(ctx context.Context, reference string) (*telnyx.Registration, error) {
	var r telnyx.Registration
	if found, err := x.s.loadRegistration(ctx, "telnyx_registrations", reference, &r); !found || err != nil {
		return nil, err
	}
	return &r, nil
}

// SaveRegistration records a registration as it now is.
func (x *TelnyxStore) SaveRegistration(ctx context.Context, r *telnyx.Registration) error {
	return x.s.saveRegistration(ctx, "telnyx_registrations", r.Reference, r.AccountID, r.Open, r)
}
