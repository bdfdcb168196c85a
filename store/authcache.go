package store

import (
	"context"
	"strings"
)

// AuthCache answers Authenticate from memory, so that an API request does not cost a query: the
// answer for a key (its id, project, kind and the project's lock) is read from the database at
// most once per TTL, and dropped at once when this or another instance announces that the key
// was revoked or created or that its project was locked or unlocked (see WakeAuth). Unknown
// and revoked keys are not remembered: they are asked about each time. Safe for concurrent use.
type AuthCache struct {
	st *Store
	*memo[Principal]
}

// NewAuthCache returns a cache in front of st's Authenticate, subscribed to st's announcements
// until Close.
func NewAuthCache(st *Store, cfg CacheConfig) *AuthCache {
	return &AuthCache{st: st, memo: newMemo(st, cfg, authChanged)}
}

// Authenticate is Store.Authenticate, answered from memory when the key's answer is fresh. The
// Principal returned is the caller's own.
func (c *AuthCache) Authenticate(ctx context.Context, secret string) (*Principal, error) {
	hash := HashKey(secret)
	p, err := c.get(ctx, hash, func(ctx context.Context) (Principal, error) {
		p, err := c.st.authenticateHash(ctx, hash)
		if err != nil {
			return Principal{}, err
		}
		return *p, nil
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// authChanged drops what an announcement (a WakeAuth payload, or AuthChangedAll) makes stale.
func authChanged(m *memo[Principal], payload string) {
	if hash, ok := strings.CutPrefix(payload, "key:"); ok {
		m.forget(hash)
		return
	}
	if id, ok := strings.CutPrefix(payload, "project:"); ok {
		m.forgetWhere(func(p Principal) bool { return p.ProjectID == id })
		return
	}
	if strings.HasPrefix(payload, "account:") {
		return // an account's fields: no key answers differently
	}
	m.forgetAll()
}
