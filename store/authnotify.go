package store

import (
	"context"
	"sync"
	"time"
)

// Announcements of changes to what an API key authenticates as, for the caches in front of
// Authenticate (AuthCache), and of changes to accounts, for the cache in front of GetAccount
// (AccountCache). A write that revokes or creates a key, locks or unlocks a project, or changes
// or archives an account announces it on WakeAuth once its transaction has committed: to this
// process's subscribers directly (OnNotify), and on PostgreSQL to every instance through NOTIFY,
// which a LISTEN connection per process (started by the first cache, ended with the last) passes
// on to its subscribers. A notification can be lost (the listening connection drops, an instance is
// partitioned); the caches' TTL bounds how long that leaves an answer stale.

// AuthChangedAll is the announcement delivered on WakeAuth when notifications may have been
// missed (the listening connection was down): everything may have changed.
const AuthChangedAll = "*"

// authListener holds this process's LISTEN on WakeAuth while any cache is subscribed (on
// PostgreSQL).
type authListener struct {
	mu    sync.Mutex
	users int
	// stop ends the listener; done is closed when it has ended. Both nil while none runs.
	stop context.CancelFunc
	done chan struct{}
	// listening is closed once the listener's LISTEN is in place for the first time.
	listening chan struct{}
	closed    bool
}

// OnAuthChange calls fn with every announcement on WakeAuth (and AuthChangedAll) until cancel is
// called. On PostgreSQL the first subscriber starts this process's listening connection, which
// lasts until the last one leaves or the store is closed; listening is closed once it is in place
// (at once on SQLite, where no other instance is to be heard). fn must not block.
func (s *Store) OnAuthChange(fn func(payload string)) (listening <-chan struct{}, cancel func()) {
	unsubscribe := s.OnNotify(WakeAuth, fn)
	if s.dialect != Postgres {
		ready := make(chan struct{})
		close(ready)
		return ready, unsubscribe
	}
	l := s.authListen
	l.mu.Lock()
	defer l.mu.Unlock()
	l.users++
	if l.stop == nil && !l.closed {
		ctx, stop := context.WithCancel(context.Background())
		l.stop, l.done, l.listening = stop, make(chan struct{}), make(chan struct{})
		go s.listenAuth(ctx, l.done, l.listening)
	}
	listening = l.listening
	if l.closed {
		ready := make(chan struct{})
		close(ready)
		listening = ready
	}
	var once sync.Once
	return listening, func() {
		once.Do(func() {
			unsubscribe()
			l.mu.Lock()
			l.users--
			var done chan struct{}
			if l.users == 0 && l.stop != nil {
				l.stop()
				done = l.done
				l.stop, l.done = nil, nil
			}
			l.mu.Unlock()
			if done != nil {
				<-done
			}
		})
	}
}

// close ends the listener for good (Store.Close).
func (l *authListener) close() {
	l.mu.Lock()
	l.closed = true
	stop, done := l.stop, l.done
	l.stop, l.done = nil, nil
	l.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// listenAuth listens on WakeAuth until ctx ends, reconnecting with a growing pause when the
// connection fails, and closes listening once the LISTEN is first in place. Every time it is,
// the subscribers hear AuthChangedAll: whatever was announced while it was not has been missed.
func (s *Store) listenAuth(ctx context.Context, done, listening chan struct{}) {
	defer close(done)
	var once sync.Once
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listen(ctx, []string{WakeAuth}, func() {
			s.wakes.deliver(WakeAuth, AuthChangedAll)
			once.Do(func() { close(listening) })
			backoff = 100 * time.Millisecond
		}, s.wakes.deliver)
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("store: listen for API key changes", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// announceAuth announces a change on WakeAuth: on PostgreSQL a NOTIFY sent with the caller's
// transaction (at its commit), and to this process's subscribers once it has committed.
func (s *Store) announceAuth(ctx context.Context, payload string) error {
	if s.dialect == Postgres {
		if err := s.q(ctx).Exec("SELECT pg_notify(?, ?)", WakeAuth, payload).Error; err != nil {
			return translate(err, "notify api key change")
		}
	}
	s.afterCommit(func() { s.wakes.deliver(WakeAuth, payload) })
	return nil
}

// announcements is a cache's subscription to the announcements on WakeAuth (OnAuthChange).
type announcements struct {
	listening   <-chan struct{}
	unsubscribe func()
}

// announcementsTo subscribes fn to the announcements on WakeAuth for a cache whose TTL is ttl;
// a cache turned off (negative TTL) needs none and is not subscribed.
func (s *Store) announcementsTo(ttl time.Duration, fn func(payload string)) announcements {
	if ttl < 0 {
		ready := make(chan struct{})
		close(ready)
		return announcements{listening: ready}
	}
	listening, unsubscribe := s.OnAuthChange(fn)
	return announcements{listening: listening, unsubscribe: unsubscribe}
}

// Listening is closed once the announcements of other instances reach the cache: at once on
// SQLite (one process) or with the cache turned off, once its listening connection is in place
// on PostgreSQL. Until then, and whenever that connection is down, only the TTL bounds how long
// a change made through another instance takes to be seen here.
func (a *announcements) Listening() <-chan struct{} { return a.listening }

// close ends the subscription (once; later calls do nothing).
func (a *announcements) close() {
	if a.unsubscribe != nil {
		a.unsubscribe()
		a.unsubscribe = nil
	}
}
