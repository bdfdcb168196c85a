package store

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// PrefixVerification is the TypeID prefix of phone verifications.
const PrefixVerification = "vfn"

// Verification statuses.
const (
	VerificationPending   = "pending"
	VerificationVerified  = "verified"
	VerificationExhausted = "exhausted"
	VerificationExpired   = "expired"
)

// Verification is a phone-number verification by a code sent to the number. The code itself is
// never stored: CodeHash is its keyed hash.
type Verification struct {
	ID        string
	ProjectID string
	// AccountID is nil for a verification of the project started without an account.
	AccountID    *string
	PhoneNumber  string
	CodeHash     []byte
	Status       string
	AttemptCount int
	CreatedAt    time.Time
	ExpiresAt    time.Time
	UpdatedAt    time.Time
}

// InsertVerification stores a verification; call it in the transaction that enqueues the sending
// of its code.
// It records the verification with the request's claimed Idempotency-Key, if any (WithIdempotencyClaim).
func (s *Store) InsertVerification(ctx context.Context, v *Verification) error {
	return s.creating(ctx, v.ID, func(tx *Store) error { return translate(tx.q(ctx).Create(v).Error, "insert verification") })
}

// GetVerification returns a project's verification.
func (s *Store) GetVerification(ctx context.Context, projectID, id string) (*Verification, error) {
	var v Verification
	if err := s.q(ctx).Where("id = ? AND project_id = ?", id, projectID).Take(&v).Error; err != nil {
		return nil, translate(err, "get verification "+id)
	}
	return &v, nil
}

// LockVerification reads a project's verification for update inside a transaction (row lock on
// PostgreSQL; SQLite transactions hold the write lock), so that concurrent checks are counted
// one after the other.
func (s *Store) LockVerification(ctx context.Context, projectID, id string) (*Verification, error) {
	q := s.q(ctx)
	if s.dialect == Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var v Verification
	if err := q.Where("id = ? AND project_id = ?", id, projectID).Take(&v).Error; err != nil {
		return nil, translate(err, "lock verification "+id)
	}
	return &v, nil
}

// SaveVerificationCheck records a check's outcome: the status and attempt count.
func (s *Store) SaveVerificationCheck(ctx context.Context, v *Verification) error {
	err := s.q(ctx).Model(&Verification{}).Where("id = ?", v.ID).
		Updates(map[string]any{"status": v.Status, "attempt_count": v.AttemptCount, "updated_at": v.UpdatedAt}).Error
	return translate(err, "save verification check "+v.ID)
}
