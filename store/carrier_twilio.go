package store

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard/switchboard/carriers/twilio"
)

// TwilioStore keeps the Twilio adapter's state in the twilio_* tables (migration 0007); it
// implements twilio.Store.
type TwilioStore struct{ s *Store }

// Twilio returns what the Twilio adapter keeps in this database.
func (s *Store) Twilio() *TwilioStore { return &TwilioStore{s: s} }

var _ twilio.Store = (*TwilioStore)(nil)

// twilioSubmission is a row of twilio_submissions: a message Twilio accepted under our reference.
type twilioSubmission struct {
	Reference string `gorm:"primaryKey"`
	SID       string `gorm:"column:sid"`
	CreatedAt time.Time
}

func (twilioSubmission) TableName() string { return "twilio_submissions" }

// SubmissionSID returns the sid recorded under reference, "" when none.
func (x *TwilioStore) SubmissionSID(ctx context.Context, reference string) (string, error) {
	var r twilioSubmission
	err := x.s.q(ctx).Where("reference = ?", reference).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	return r.SID, translate(err, "twilio submission")
}

// AddSubmission records a message Twilio accepted; a recorded reference keeps its first sid.
func (x *TwilioStore) AddSubmission(ctx context.Context, reference, sid string, at time.Time) error {
	err := x.s.q(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&twilioSubmission{Reference: reference, SID: sid, CreatedAt: at}).Error
	return translate(err, "record twilio submission")
}

// InsertJob enqueues one of the adapter's jobs.
func (x *TwilioStore) InsertJob(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error {
	return x.s.InsertJob(ctx, args, opts)
}
