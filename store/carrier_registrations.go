package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// carrierRegistration is a row of an adapter's registrations table (twilio_registrations,
// telnyx_registrations): a campaign or toll-free verification by our reference, its state JSON of
// the adapter's own type, open until its verdict is reported or it is withdrawn.
type carrierRegistration struct {
	Reference string `gorm:"primaryKey"`
	AccountID string
	State     string
	Open      bool
	UpdatedAt time.Time
}

// loadRegistration decodes the state of the registration of reference in table into out; false
// when there is none.
func (s *Store) loadRegistration(ctx context.Context, table, reference string, out any) (bool, error) {
	var row carrierRegistration
	err := s.q(ctx).Table(table).Where("reference = ?", reference).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return false, nil
	}
	if err != nil {
		return false, translate(err, table)
	}
	return true, translate(json.Unmarshal([]byte(row.State), out), "decode "+table)
}

// saveRegistration writes a registration's state (encoded as JSON) into table, inserting or
// replacing its row.
func (s *Store) saveRegistration(ctx context.Context, table, reference, accountID string, open bool, state any) error {
	b, err := json.Marshal(state)
	if err != nil {
		return err
	}
	row := carrierRegistration{Reference: reference, AccountID: accountID, State: string(b), Open: open, UpdatedAt: now()}
	err = s.q(ctx).Table(table).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "reference"}},
		DoUpdates: clause.AssignmentColumns([]string{"account_id", "state", "open", "updated_at"})}).Create(&row).Error
	return translate(err, "save "+table)
}
