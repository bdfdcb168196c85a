package store

import (
	"context"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// DefaultAuthCacheTTL is how long an AuthCache answers from memory by default. A revoked key or a
// locked project is refused on every instance within 1 s even when its announcement is lost:
// this, plus the time a request takes, stays under it.
const DefaultAuthCacheTTL = 500 * time.Millisecond

// AuthCacheConfig tunes an AuthCache.
type AuthCacheConfig struct {
	// TTL is how long an answer read from the database is served from memory. Announcements
	// (OnAuthChange) drop an answer as soon as its key or project changes; the TTL bounds how
	// stale an answer can be when one is lost. Defaults to DefaultAuthCacheTTL; negative turns
	// the cache off (every request asks the database).
	TTL time.Duration
	// MaxEntries caps how many keys are remembered; when it is reached the expired answers are
	// dropped, and all of them if none has expired. Defaults to 10,000.
	MaxEntries int
}

// AuthCache answers Authenticate from memory, so that an API request does not cost a query: the
// answer for a key (its id, project, kind and the project's lock) is read from the database at
// most once per TTL, and dropped at once when this or another instance announces that the key
// was revoked or created or that its project was locked or unlocked (see WakeAuth). Unknown
// and revoked keys are not remembered: they are asked about each time. Safe for concurrent use.
type AuthCache struct {
	st  *Store
	ttl time.Duration
	max int
	// flights makes the callers that miss the same key at once share one query.
	flights singleflight.Group
	// unsubscribe ends the subscription to announcements; listening is closed once other
	// instances' announcements reach it.
	unsubscribe func()
	listening   <-chan struct{}

	mu      sync.RWMutex
	entries map[string]authEntry
	// gen counts the announcements heard: a query that started before one may have read what it
	// changed, so its answer is not remembered.
	gen uint64
}

// authEntry is a remembered answer and when the query that read it started.
type authEntry struct {
	p  Principal
	at time.Time
}

// NewAuthCache returns a cache in front of st's Authenticate, subscribed to st's announcements
// until Close.
func NewAuthCache(st *Store, cfg AuthCacheConfig) *AuthCache {
	c := &AuthCache{st: st, ttl: cfg.TTL, max: cfg.MaxEntries, entries: map[string]authEntry{}}
	if c.ttl == 0 {
		c.ttl = DefaultAuthCacheTTL
	}
	if c.max <= 0 {
		c.max = 10_000
	}
	if c.ttl > 0 {
		c.listening, c.unsubscribe = st.OnAuthChange(c.changed)
	} else {
		ready := make(chan struct{})
		close(ready)
		c.listening = ready
	}
	return c
}

// Listening is closed once the announcements of other instances reach the cache: at once on
// SQLite (one process) or with the cache turned off, once its listening connection is in place
// on PostgreSQL. Until then, and whenever that connection is down, only the TTL bounds how long
// another instance's revocation takes to be seen here.
func (c *AuthCache) Listening() <-chan struct{} { return c.listening }

// Close stops listening for announcements; the cache then answers from the database only.
func (c *AuthCache) Close() {
	if c.unsubscribe != nil {
		c.unsubscribe()
		c.unsubscribe = nil
	}
	c.mu.Lock()
	c.ttl = -1
	clear(c.entries)
	c.mu.Unlock()
}

// Authenticate is Store.Authenticate, answered from memory when the key's answer is fresh. The
// Principal returned is the caller's own.
func (c *AuthCache) Authenticate(ctx context.Context, secret string) (*Principal, error) {
	hash := HashKey(secret)
	c.mu.RLock()
	e, ok := c.entries[hash]
	ttl := c.ttl
	c.mu.RUnlock()
	if ttl < 0 {
		return c.st.authenticateHash(ctx, hash)
	}
	if ok && time.Since(e.at) < ttl {
		p := e.p
		return &p, nil
	}
	v, err, _ := c.flights.Do(hash, func() (any, error) {
		c.mu.RLock()
		gen := c.gen
		c.mu.RUnlock()
		at := time.Now()
		// The callers sharing this query must not lose it because the first one went away.
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		p, err := c.st.authenticateHash(qctx, hash)
		if err != nil {
			return nil, err
		}
		c.remember(hash, authEntry{p: *p, at: at}, gen)
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	p := *v.(*Principal)
	return &p, nil
}

// remember keeps an answer unless an announcement came after its query started (gen).
func (c *AuthCache) remember(hash string, e authEntry, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || c.ttl < 0 {
		return
	}
	if len(c.entries) >= c.max {
		for h, old := range c.entries {
			if time.Since(old.at) >= c.ttl {
				delete(c.entries, h)
			}
		}
		if len(c.entries) >= c.max {
			clear(c.entries)
		}
	}
	c.entries[hash] = e
}

// changed drops what an announcement (a WakeAuth payload, or AuthChangedAll) makes stale.
func (c *AuthCache) changed(payload string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if hash, ok := strings.CutPrefix(payload, "key:"); ok {
		delete(c.entries, hash)
		// Callers that come now must not join a query that started before the change.
		c.flights.Forget(hash)
		return
	}
	if id, ok := strings.CutPrefix(payload, "project:"); ok {
		for h, e := range c.entries {
			if e.p.ProjectID == id {
				delete(c.entries, h)
				c.flights.Forget(h)
			}
		}
		return
	}
	clear(c.entries)
}
