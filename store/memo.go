package store

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// DefaultCacheTTL is how long the store's in-process caches (AuthCache, AccountCache) answer from
// memory by default. A revoked key, a locked project or a changed account is seen on every
// instance within 1 s even when its announcement is lost: this, plus the time a request takes,
// stays under it.
const DefaultCacheTTL = 500 * time.Millisecond

// CacheConfig tunes one of the store's in-process caches (AuthCache, AccountCache).
type CacheConfig struct {
	// TTL is how long an answer read from the database is served from memory. Announcements
	// (OnAuthChange) drop an answer as soon as what it was read from changes; the TTL bounds how
	// stale it can be when one is lost. Defaults to DefaultCacheTTL; negative turns the cache off
	// (every read asks the database).
	TTL time.Duration
	// MaxEntries caps how many answers are remembered; when it is reached the expired ones are
	// dropped, and all of them if none has expired. Defaults to 10,000.
	MaxEntries int
}

// memo is what the store's in-process caches (AuthCache, AccountCache) share: answers read from
// the database, remembered by key for a TTL, and dropped as soon as an announcement on WakeAuth
// says that what they were read from changed. Safe for concurrent use.
type memo[V any] struct {
	announcements
	ttl time.Duration
	max int
	// flights makes the callers that miss the same key at once share one query.
	flights singleflight.Group

	mu      sync.RWMutex
	entries map[string]memoEntry[V]
	// gen counts the changes heard: a query that started before one may have read what it
	// changed, so its answer is not remembered.
	gen uint64
}

// memoEntry is a remembered answer and when the query that read it started.
type memoEntry[V any] struct {
	v  V
	at time.Time
}

// newMemo returns a memo that remembers answers as cfg says, and passes it the announcements on
// WakeAuth (changed must not block) until Close.
func newMemo[V any](st *Store, cfg CacheConfig, changed func(m *memo[V], payload string)) *memo[V] {
	ttl, maxEntries := cfg.TTL, cfg.MaxEntries
	if ttl == 0 {
		ttl = DefaultCacheTTL
	}
	if maxEntries <= 0 {
		maxEntries = 10_000
	}
	m := &memo[V]{ttl: ttl, max: maxEntries, entries: map[string]memoEntry[V]{}}
	m.announcements = st.announcementsTo(ttl, func(payload string) { changed(m, payload) })
	return m
}

// Close stops listening for announcements; the cache then answers from the database only.
func (m *memo[V]) Close() {
	m.announcements.close()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ttl = -1
	clear(m.entries)
}

// get returns key's answer from memory when it is fresh, otherwise from load, whose answer it
// remembers unless a change was heard while load ran. Callers that miss the same key at once
// share one load, which the first caller going away does not cancel. Errors are not remembered.
func (m *memo[V]) get(ctx context.Context, key string, load func(context.Context) (V, error)) (V, error) {
	m.mu.RLock()
	e, ok := m.entries[key]
	ttl := m.ttl
	m.mu.RUnlock()
	if ttl < 0 {
		return load(ctx)
	}
	if ok && time.Since(e.at) < ttl {
		return e.v, nil
	}
	v, err, _ := m.flights.Do(key, func() (any, error) {
		m.mu.RLock()
		gen := m.gen
		m.mu.RUnlock()
		at := time.Now()
		// The callers sharing this query must not lose it because the first one went away.
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		v, err := load(qctx)
		if err != nil {
			return nil, err
		}
		m.remember(key, memoEntry[V]{v: v, at: at}, gen)
		return v, nil
	})
	if err != nil {
		var zero V
		return zero, err
	}
	return v.(V), nil
}

// remember keeps an answer unless a change was heard after its query started (gen).
func (m *memo[V]) remember(key string, e memoEntry[V], gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen != gen || m.ttl < 0 {
		return
	}
	if len(m.entries) >= m.max {
		for k, old := range m.entries {
			if time.Since(old.at) >= m.ttl {
				delete(m.entries, k)
			}
		}
		if len(m.entries) >= m.max {
			clear(m.entries)
		}
	}
	m.entries[key] = e
}

// forget drops key's answer; callers that come now do not join a query that started before.
func (m *memo[V]) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	delete(m.entries, key)
	m.flights.Forget(key)
}

// forgetWhere drops the answers stale for which is true.
func (m *memo[V]) forgetWhere(stale func(V) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	for k, e := range m.entries {
		if stale(e.v) {
			delete(m.entries, k)
			m.flights.Forget(k)
		}
	}
}

// forgetAll drops every answer.
func (m *memo[V]) forgetAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	clear(m.entries)
}
