package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Wake-ups: the store tells this process's dispatchers that there is work (a message queued, a
// webhook delivery made) as soon as the statement that made it returns, and, on PostgreSQL, tells
// the other instances through NOTIFY. Listen delivers other instances' notifications here. Every
// dispatcher polls too, so a lost notification only delays work.

// Channels of the wake-ups (PostgreSQL's NOTIFY channels).
const (
	// WakeOutbound: messages were queued for dispatch.
	WakeOutbound = "switchboard_outbound"
	// WakeWebhooks: webhook deliveries were made or became due.
	WakeWebhooks = "switchboard_webhooks"
	// WakeAuth: an API key was revoked or created, a project locked or unlocked, or an account
	// changed; the payload is "key:<hash>", "project:<id>" or "account:<id>" (see OnAuthChange,
	// which listens on it for the in-process caches, AuthCache and AccountCache).
	WakeAuth = "switchboard_auth"
)

// notifyEvery is how often at most one channel's NOTIFY goes to the other instances: wake-ups
// within it are coalesced.
const notifyEvery = 10 * time.Millisecond

// wakeups is the registry of one Store (shared by its transactions' copies).
type wakeups struct {
	mu   sync.Mutex
	subs map[string][]chan struct{}
	fns  map[string]map[int]func(payload string)
	// nextFn numbers the OnNotify subscriptions.
	nextFn int
	// pending are the channels to notify other instances of; kick starts the notifier.
	pending map[string]bool
	kick    chan struct{}
	stop    chan struct{}
	started bool
	// self is the payload of this registry's NOTIFYs, by which Listen knows its own and drops them.
	self string
}

func newWakeups() *wakeups {
	return &wakeups{subs: map[string][]chan struct{}{}, fns: map[string]map[int]func(string){}, pending: map[string]bool{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), self: "w" + NewID("")}
}

// Subscribe returns a channel that receives a value (coalesced) whenever channel ch is woken, by
// this process or, while Listen runs, by another instance.
func (s *Store) Subscribe(ch string) <-chan struct{} {
	c := make(chan struct{}, 1)
	s.wakes.mu.Lock()
	s.wakes.subs[ch] = append(s.wakes.subs[ch], c)
	s.wakes.mu.Unlock()
	return c
}

// OnNotify calls fn with the payload of every notification on channel ch, from this process or,
// while a listener of ch runs (Listen, or for WakeAuth OnAuthChange's), from another instance,
// until cancel is called. fn must not block.
func (s *Store) OnNotify(ch string, fn func(payload string)) (cancel func()) {
	w := s.wakes
	w.mu.Lock()
	defer w.mu.Unlock()
	id := w.nextFn
	w.nextFn++
	if w.fns[ch] == nil {
		w.fns[ch] = map[int]func(string){}
	}
	w.fns[ch][id] = fn
	return func() {
		w.mu.Lock()
		delete(w.fns[ch], id)
		w.mu.Unlock()
	}
}

// deliver signals the local subscribers of ch.
func (w *wakeups) deliver(ch, payload string) {
	w.mu.Lock()
	subs := w.subs[ch]
	fns := make([]func(string), 0, len(w.fns[ch]))
	for _, fn := range w.fns[ch] {
		fns = append(fns, fn)
	}
	w.mu.Unlock()
	for _, c := range subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	for _, fn := range fns {
		fn(payload)
	}
}

// wake wakes channel ch here at once and, on PostgreSQL, in the other instances shortly after;
// inside Tx, once the transaction commits.
func (s *Store) wake(ch string) {
	if s.woken != nil {
		*s.woken = append(*s.woken, ch)
		return
	}
	w := s.wakes
	w.deliver(ch, "")
	if s.dialect != Postgres {
		return
	}
	w.mu.Lock()
	w.pending[ch] = true
	start := !w.started
	w.started = true
	w.mu.Unlock()
	if start {
		go s.notifier()
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Wake wakes channel ch as the store's own writes do (see wake).
func (s *Store) Wake(ch string) { s.wake(ch) }

// notifier sends the pending NOTIFYs, at most one per channel every notifyEvery.
func (s *Store) notifier() {
	w := s.wakes
	for {
		select {
		case <-w.stop:
			return
		case <-w.kick:
		}
		w.mu.Lock()
		chs := make([]string, 0, len(w.pending))
		for ch := range w.pending {
			chs = append(chs, ch)
		}
		clear(w.pending)
		w.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		for _, ch := range chs {
			_ = s.q(ctx).Exec("SELECT pg_notify(?, ?)", ch, w.self).Error
		}
		cancel()
		select {
		case <-w.stop:
			return
		case <-time.After(notifyEvery):
		}
	}
}

// Listen holds a connection that listens on the channels (the dispatchers' when none is given:
// WakeOutbound and WakeWebhooks; WakeAuth has its own while API key caches need it, see
// OnAuthChange), delivering each notification to this process's subscribers (Subscribe,
// OnNotify), until ctx ends or the connection fails (it returns that error; call it again). ready
// is called once the LISTEN is in place. On SQLite it returns ErrNoListen at once. This store's
// own NOTIFYs come back to it too, a moment after its subscribers were woken at once: they are
// dropped (by their payload), so that a dispatcher does not wake a second time for work it has
// already claimed, which made the webhook deliverer claim nothing and record its successes alone.
func (s *Store) Listen(ctx context.Context, ready func(), channels ...string) error {
	if len(channels) == 0 {
		channels = []string{WakeOutbound, WakeWebhooks}
	}
	w := s.wakes
	return s.listen(ctx, channels, ready, func(ch, payload string) {
		if payload != w.self {
			w.deliver(ch, payload)
		}
	})
}

// listen holds a connection listening on channels and calls fn with every notification.
func (s *Store) listen(ctx context.Context, channels []string, ready func(), fn func(channel, payload string)) error {
	if s.dialect != Postgres {
		return ErrNoListen
	}
	return s.pgxConn(ctx, func(pc *pgx.Conn) error {
		for _, ch := range channels {
			if _, err := pc.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
				return fmt.Errorf("store: listen: %w", err)
			}
		}
		// The connection goes back to the pool afterwards: stop listening on it.
		defer func() { _, _ = pc.Exec(context.WithoutCancel(ctx), "UNLISTEN *") }()
		if ready != nil {
			ready()
		}
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("store: wait for notification: %w", err)
			}
			fn(n.Channel, strings.TrimSpace(n.Payload))
		}
	})
}

// ErrNoListen means the database offers no notifications (SQLite): poll instead.
var ErrNoListen = errors.New("store: this database has no LISTEN/NOTIFY")

// closeWakeups stops the notifier.
func (w *wakeups) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
}
