package store

import (
	"context"
	"encoding/json"
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

// twilioBrand is a row of twilio_brands.
type twilioBrand struct {
	AccountID string `gorm:"primaryKey"`
	State     string
	UpdatedAt time.Time
}

func (twilioBrand) TableName() string { return "twilio_brands" }

// twilioNumber is a row of twilio_numbers.
type twilioNumber struct {
	Number     string `gorm:"primaryKey"`
	ServiceSID string `gorm:"column:service_sid"`
	UpdatedAt  time.Time
}

func (twilioNumber) TableName() string { return "twilio_numbers" }

// Brand returns an account's brand as registered so far, nil when nothing.
func (x *TwilioStore) Brand(ctx context.Context, accountID string) (*twilio.BrandState, error) {
	var row twilioBrand
	err := x.s.q(ctx).Where("account_id = ?", accountID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err, "twilio brand")
	}
	var b twilio.BrandState
	return &b, translate(json.Unmarshal([]byte(row.State), &b), "decode twilio brand")
}

// SaveBrand records an account's brand as registered so far.
func (x *TwilioStore) SaveBrand(ctx context.Context, b *twilio.BrandState) error {
	state, err := json.Marshal(b)
	if err != nil {
		return err
	}
	row := twilioBrand{AccountID: b.AccountID, State: string(state), UpdatedAt: now()}
	err = x.s.q(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "account_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"state", "updated_at"})}).Create(&row).Error
	return translate(err, "save twilio brand")
}

// Registration returns a registration by reference, nil when none.
func (x *TwilioStore) Registration(ctx context.Context, reference string) (*twilio.Registration, error) {
	var r twilio.Registration
	if found, err := x.s.loadRegistration(ctx, "twilio_registrations", reference, &r); !found || err != nil {
		return nil, err
	}
	return &r, nil
}

// SaveRegistration records a registration as it now is.
func (x *TwilioStore) SaveRegistration(ctx context.Context, r *twilio.Registration) error {
	return x.s.saveRegistration(ctx, "twilio_registrations", r.Reference, r.AccountID, r.Open, r)
}

// OpenRegistrations returns an account's registrations that await a verdict.
func (x *TwilioStore) OpenRegistrations(ctx context.Context, accountID string) ([]twilio.Registration, error) {
	var rows []carrierRegistration
	if err := x.s.q(ctx).Table("twilio_registrations").Where("account_id = ? AND open", accountID).Order("reference").Find(&rows).Error; err != nil {
		return nil, translate(err, "open twilio registrations")
	}
	out := make([]twilio.Registration, len(rows))
	for i, row := range rows {
		if err := json.Unmarshal([]byte(row.State), &out[i]); err != nil {
			return nil, translate(err, "decode twilio registration")
		}
	}
	return out, nil
}

// AccountOfBundle returns the account whose brand has a TrustHub bundle sid, "" when none.
func (x *TwilioStore) AccountOfBundle(ctx context.Context, bundleSID string) (string, error) {
	// The state is JSON written by SaveBrand; sids are 34 characters of [A-Za-z0-9], so a
	// substring match on the quoted sid cannot match another field.
	var ids []string
	err := x.s.q(ctx).Model(&twilioBrand{}).Where("state LIKE ?", `%"`+bundleSID+`"%`).Limit(1).Pluck("account_id", &ids).Error
	if err != nil || len(ids) == 0 {
		return "", translate(err, "twilio brand of bundle")
	}
	return ids[0], nil
}

// NumberService returns the Messaging Service a number was added to, "" when none.
func (x *TwilioStore) NumberService(ctx context.Context, number string) (string, error) {
	var row twilioNumber
	err := x.s.q(ctx).Where("number = ?", number).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	return row.ServiceSID, translate(err, "twilio number service")
}

// SetNumberService records the Messaging Service a number was added to ("" when taken off).
func (x *TwilioStore) SetNumberService(ctx context.Context, number, serviceSID string) error {
	if serviceSID == "" {
		return translate(x.s.q(ctx).Where("number = ?", number).Delete(&twilioNumber{}).Error, "forget twilio number service")
	}
	row := twilioNumber{Number: number, ServiceSID: serviceSID, UpdatedAt: now()}
	err := x.s.q(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "number"}},
		DoUpdates: clause.AssignmentColumns([]string{"service_sid", "updated_at"})}).Create(&row).Error
	return translate(err, "record twilio number service")
}
