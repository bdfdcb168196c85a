package store

import (
	"context"
	"time"
)

// User is a person who uses the embeddable components of one account.
type User struct {
	ID        string
	ProjectID string
	AccountID string
	FirstName string
	LastName  *string
	Metadata  Metadata
	PhotoURL  *string
	CreatedAt time.Time
	UpdatedAt time.Time
	// DeletedAt marks a deleted user: invisible to the API, and its tokens are refused.
	DeletedAt *time.Time
}

// UserPatch lists the fields an update changes; nil fields are left alone.
type UserPatch struct {
	FirstName *string
	LastName  *string
	Metadata  Metadata
	PhotoURL  *string
}

// CreateUser inserts a user into an account, which must be the project's.
// It records the user with the request's claimed Idempotency-Key, if any (WithIdempotencyClaim).
func (s *Store) CreateUser(ctx context.Context, u *User) error {
	if _, err := s.GetAccount(ctx, u.ProjectID, u.AccountID); err != nil {
		return err
	}
	u.ID = NewID(PrefixUser)
	u.CreatedAt = now()
	u.UpdatedAt = u.CreatedAt
	if u.Metadata == nil {
		u.Metadata = Metadata{}
	}
	return s.creating(ctx, u.ID, func(tx *Store) error { return translate(tx.q(ctx).Create(u).Error, "create user") })
}

// GetUser returns a project's user unless it was deleted.
func (s *Store) GetUser(ctx context.Context, projectID, id string) (*User, error) {
	var u User
	if err := s.q(ctx).Where("id = ? AND project_id = ? AND deleted_at IS NULL", id, projectID).Take(&u).Error; err != nil {
		return nil, translate(err, "get user "+id)
	}
	return &u, nil
}

// UserActive reports whether a user exists and is not deleted, whatever its project; token
// verification uses it.
func (s *Store) UserActive(ctx context.Context, id string) (bool, error) {
	var n int64
	if err := s.q(ctx).Model(&User{}).Where("id = ? AND deleted_at IS NULL", id).Count(&n).Error; err != nil {
		return false, translate(err, "user active")
	}
	return n > 0, nil
}

// ListUsers returns one page of an account's users.
func (s *Store) ListUsers(ctx context.Context, projectID, accountID string, p Page) ([]User, Cursors, error) {
	if _, err := s.GetAccount(ctx, projectID, accountID); err != nil {
		return nil, Cursors{}, err
	}
	return paginate(s.q(ctx).Model(&User{}).Where("account_id = ? AND deleted_at IS NULL", accountID), p,
		func(u *User) string { return u.ID })
}

// UpdateUser applies a patch and returns the result.
func (s *Store) UpdateUser(ctx context.Context, projectID, id string, patch UserPatch) (*User, error) {
	var out *User
	err := s.Tx(ctx, func(tx *Store) error {
		u, err := tx.GetUser(ctx, projectID, id)
		if err != nil {
			return err
		}
		if patch.FirstName != nil {
			u.FirstName = *patch.FirstName
		}
		if patch.LastName != nil {
			u.LastName = patch.LastName
		}
		if patch.Metadata != nil {
			u.Metadata = patch.Metadata
		}
		if patch.PhotoURL != nil {
			u.PhotoURL = patch.PhotoURL
		}
		u.UpdatedAt = now()
		if err := tx.q(ctx).Select("*").Updates(u).Error; err != nil {
			return translate(err, "update user")
		}
		out = u
		return nil
	})
	return out, err
}

// DeleteUser marks a user deleted and returns it as it was.
func (s *Store) DeleteUser(ctx context.Context, projectID, id string) (*User, error) {
	var out *User
	err := s.Tx(ctx, func(tx *Store) error {
		u, err := tx.GetUser(ctx, projectID, id)
		if err != nil {
			return err
		}
		t := now()
		if err := tx.q(ctx).Model(u).Update("deleted_at", t).Error; err != nil {
			return translate(err, "delete user")
		}
		out = u
		return nil
	})
	return out, err
}
