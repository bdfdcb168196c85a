package store

import (
	"context"
	"fmt"
	"strings"
)

// AccountCache answers GetAccount from memory, so that reading an account (GET /accounts/{id})
// does not cost a query: an account is read from the database at most once per TTL, and dropped
// at once when this instance changes it (once the change has committed) and, through
// announcements, when another instance does (see WakeAuth). Unknown accounts are not remembered:
// they are asked about each time. Safe for concurrent use.
type AccountCache struct {
	st *Store
	*memo[Account]
}

// NewAccountCache returns a cache in front of st's GetAccount, subscribed to st's announcements
// until Close.
func NewAccountCache(st *Store, cfg CacheConfig) *AccountCache {
	return &AccountCache{st: st, memo: newMemo(st, cfg, accountChanged)}
}

// GetAccount is Store.GetAccount, answered from memory when the account is fresh. The Account
// returned is the caller's own.
func (c *AccountCache) GetAccount(ctx context.Context, projectID, id string) (*Account, error) {
	// Remembered by id alone (the announcements name the id), whatever project asks.
	a, err := c.get(ctx, id, func(ctx context.Context) (Account, error) {
		a, err := c.st.AccountByID(ctx, id)
		if err != nil {
			return Account{}, err
		}
		return *a, nil
	})
	if err != nil {
		return nil, err // AccountByID's errors are GetAccount's
	}
	if a.ProjectID != projectID { // an account never moves to another project
		return nil, fmt.Errorf("get account %s: %w", id, ErrNotFound)
	}
	a.BrandName, a.TimeZone, a.ArchivedAt = clone(a.BrandName), clone(a.TimeZone), clone(a.ArchivedAt)
	return &a, nil
}

// accountChanged drops what an announcement (a WakeAuth payload, or AuthChangedAll) makes stale.
func accountChanged(m *memo[Account], payload string) {
	if id, ok := strings.CutPrefix(payload, "account:"); ok {
		m.forget(id)
		return
	}
	if payload == AuthChangedAll {
		m.forgetAll()
	}
	// Keys and projects' locks: no account reads differently.
}

// clone is a copy of *p in a new variable, or nil.
func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
