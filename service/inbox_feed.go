package service

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// watchFor is how long an account's watch lasts (see store.WatchAccounts); feed renews the
// watches of the accounts it serves every watchFor/3.
const watchFor = 3 * time.Minute

// feed wakes the live streams of an account when its data changes. On PostgreSQL one connection
// per instance listens on store.EmbedChannel, which the events of watched accounts and the read
// marks notify, so it works whichever instance made the change; on SQLite nothing wakes the
// streams and they poll.
type feed struct {
	store *store.Store
	log   *slog.Logger

	mu      sync.Mutex
	subs    map[string]map[*subscription]struct{}
	stop    context.CancelFunc
	stopped chan struct{}
}

type subscription struct {
	account string
	wake    chan struct{}
}

func newFeed(st *store.Store, log *slog.Logger) *feed {
	return &feed{store: st, log: log, subs: map[string]map[*subscription]struct{}{}}
}

// subscribe registers a stream of an account: it watches the account in the database first, so
// that every change committed afterwards notifies this instance.
func (f *feed) subscribe(ctx context.Context, account string) (*subscription, error) {
	if err := f.store.WatchAccounts(ctx, []string{account}, time.Now().Add(watchFor)); err != nil {
		return nil, err
	}
	s := &subscription{account: account, wake: make(chan struct{}, 1)}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.subs[account] == nil {
		f.subs[account] = map[*subscription]struct{}{}
	}
	f.subs[account][s] = struct{}{}
	if f.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		f.stop, f.stopped = cancel, make(chan struct{})
		go f.run(ctx)
	}
	return s, nil
}

func (f *feed) unsubscribe(s *subscription) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.subs[s.account], s)
	if len(f.subs[s.account]) == 0 {
		delete(f.subs, s.account)
	}
}

// wake wakes the streams of an account, or of every account when account is "".
func (f *feed) wake(account string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for acct, subs := range f.subs {
		if account != "" && acct != account {
			continue
		}
		for s := range subs {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
}

func (f *feed) accounts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.subs))
	for a := range f.subs {
		out = append(out, a)
	}
	return out
}

// run renews the watches and, on PostgreSQL, listens until ctx ends.
func (f *feed) run(ctx context.Context) {
	defer close(f.stopped)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(watchFor / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			now := time.Now()
			if err := f.store.WatchAccounts(ctx, f.accounts(), now.Add(watchFor)); err != nil && ctx.Err() == nil {
				f.log.Warn("embed: renew watches", "err", err)
			}
			if err := f.store.PurgeEmbedWatches(ctx, now.Add(-time.Hour)); err != nil && ctx.Err() == nil {
				f.log.Warn("embed: purge watches", "err", err)
			}
		}
	})
	backoff := time.Second
	for ctx.Err() == nil {
		// Once listening, wake every stream: a notification may have been missed while the
		// connection was down, and the streams read again what changed.
		err := f.store.ListenEmbed(ctx, func() { f.wake(""); backoff = time.Second }, f.wake)
		if errors.Is(err, store.ErrNoListen) || ctx.Err() != nil {
			break
		}
		f.log.Warn("embed: listen for changes", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
	wg.Wait()
}

// close stops listening and renewing watches; the next subscription starts again.
func (f *feed) close() {
	f.mu.Lock()
	stop, stopped := f.stop, f.stopped
	f.stop = nil
	f.mu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
}

// streamEventTypes are the events that change what the components show.
var streamEventTypes = []string{webhooks.EventMessageReceived, webhooks.EventMessageSent, webhooks.EventMessageDelivered, webhooks.EventMessageFailed,
	webhooks.EventConversationCreated, webhooks.EventContactOptedOut, webhooks.EventContactOptedIn, webhooks.EventCallEnded, webhooks.EventVoicemailReceived,
	webhooks.EventRecordingCompleted}

// Stream reads what changes for one viewer, as the live stream sends it. Each Next reads again
// from Window before the previous read's start, leaving out what it sent already, so a change
// whose transaction committed after a later one's is still sent; a change may be sent twice
// (after a reconnection), never lost. Every change carries the current state, so applying one
// twice is harmless.
type Stream struct {
	in         *Inbox
	viewer     *store.Viewer
	sub        *subscription
	since      time.Time
	seenEvents map[string]time.Time
	seenReads  map[string]time.Time
	first      bool
}

// CallChange is a call of a conversation's thread that changed.
type CallChange struct {
	store.ThreadCall
	ConversationID string
}

// Changes are what changed for a viewer since a stream's previous read.
type Changes struct {
	Messages      []store.MessageView
	Calls         []CallChange
	Conversations []store.InboxConversation
	// UnreadConversations and UnreadMessages are the viewer's totals, read with the changes.
	UnreadConversations, UnreadMessages int
	// Position is where the next read goes on from; a stream resumed from it misses nothing.
	Position time.Time
}

// Empty reports whether nothing changed.
func (c *Changes) Empty() bool {
	return len(c.Messages) == 0 && len(c.Calls) == 0 && len(c.Conversations) == 0
}

// ErrStreamTooOld means a stream was resumed from too long ago: the client reloads what it shows.
var ErrStreamTooOld = errors.New("service: stream position too old")

// MaxStreamResume is how far back a stream can be resumed.
const MaxStreamResume = time.Hour

// OpenStream starts a viewer's live stream from position (zero: now), which must be at most
// MaxStreamResume ago (else ErrStreamTooOld). Close it when done.
func (in *Inbox) OpenStream(ctx context.Context, v *store.Viewer, position time.Time) (*Stream, error) {
	now := time.Now()
	if position.IsZero() || position.After(now) {
		position = now
	}
	if now.Sub(position) > MaxStreamResume {
		return nil, ErrStreamTooOld
	}
	sub, err := in.feed.subscribe(ctx, v.AccountID)
	if err != nil {
		return nil, err
	}
	return &Stream{in: in, viewer: v, sub: sub, since: position.Add(-in.cfg.Window),
		seenEvents: map[string]time.Time{}, seenReads: map[string]time.Time{}, first: true}, nil
}

// Wake is signalled when the viewer's account may have changed.
func (s *Stream) Wake() <-chan struct{} { return s.sub.wake }

// PollInterval is how long to wait for Wake before calling Next anyway.
func (s *Stream) PollInterval() time.Duration { return s.in.cfg.PollInterval }

// Close ends the stream.
func (s *Stream) Close() { s.in.feed.unsubscribe(s.sub) }

// Next reads what changed since the previous read. The first read always carries the unread
// totals; later ones only when something changed.
func (s *Stream) Next(ctx context.Context) (*Changes, error) {
	st, v := s.in.cfg.Store, s.viewer
	start := time.Now()
	out := &Changes{Position: start}
	ids, err := st.AccountEventIDs(ctx, v.AccountID, streamEventTypes, s.since)
	if err != nil {
		return nil, err
	}
	var fresh []string
	for _, id := range ids {
		if _, ok := s.seenEvents[id]; !ok {
			fresh = append(fresh, id)
		}
	}
	evs, err := st.EventsByID(ctx, fresh)
	if err != nil {
		return nil, err
	}
	reads, err := st.ReadsSince(ctx, v.UserID, s.since)
	if err != nil {
		return nil, err
	}
	convs, msgIDs, callIDs, contactIDs := map[string]bool{}, []string{}, []string{}, []string{}
	for _, e := range evs {
		var d struct {
			ID           string `json:"id"`
			Conversation *struct {
				ID string `json:"id"`
			} `json:"conversation"`
			Call *struct {
				ID string `json:"id"`
			} `json:"call"`
		}
		if err := json.Unmarshal([]byte(e.Data), &d); err != nil {
			s.in.cfg.Logger.Warn("embed: unreadable event", "event_id", e.ID, "err", err)
			continue
		}
		switch e.Type {
		case webhooks.EventMessageReceived, webhooks.EventMessageSent, webhooks.EventMessageDelivered, webhooks.EventMessageFailed:
			msgIDs = append(msgIDs, d.ID)
		case webhooks.EventConversationCreated:
			convs[d.ID] = true
		case webhooks.EventContactOptedOut, webhooks.EventContactOptedIn:
			contactIDs = append(contactIDs, d.ID)
		case webhooks.EventCallEnded:
			callIDs = append(callIDs, d.ID)
		case webhooks.EventVoicemailReceived, webhooks.EventRecordingCompleted:
			if d.Call != nil {
				callIDs = append(callIDs, d.Call.ID)
			}
		}
	}
	freshReads := map[string]time.Time{}
	for _, r := range reads {
		key := r.ConversationID + "@" + r.ReadAt.UTC().Format(time.RFC3339Nano)
		if _, ok := s.seenReads[key]; !ok {
			freshReads[key] = r.ReadAt
			convs[r.ConversationID] = true
		}
	}
	if err := s.collect(ctx, out, convs, msgIDs, callIDs, contactIDs); err != nil {
		return nil, err
	}
	// Only now that everything was read: what failed to be read is read again next time.
	for _, e := range evs {
		s.seenEvents[e.ID] = store.TimeOfID(e.ID)
	}
	for k, t := range freshReads {
		s.seenReads[k] = t
	}
	if !out.Empty() || s.first {
		if out.UnreadConversations, out.UnreadMessages, err = st.UnreadConversations(ctx, v.AccountID, v.UserID); err != nil {
			return nil, err
		}
	}
	s.first = false
	s.since = start.Add(-s.in.cfg.Window)
	for id, t := range s.seenEvents {
		if t.Before(s.since) {
			delete(s.seenEvents, id)
		}
	}
	for k, t := range s.seenReads {
		if t.Before(s.since) {
			delete(s.seenReads, k)
		}
	}
	return out, nil
}

// collect loads the messages, calls and conversations that changed into out.
func (s *Stream) collect(ctx context.Context, out *Changes, convs map[string]bool, msgIDs, callIDs, contactIDs []string) error {
	st, v := s.in.cfg.Store, s.viewer
	msgs, err := st.ThreadMessagesByID(ctx, v.AccountID, msgIDs)
	if err != nil {
		return err
	}
	out.Messages = msgs
	for _, m := range msgs {
		convs[m.ConversationID] = true
	}
	calls, err := st.CallsByID(ctx, v.AccountID, callIDs)
	if err != nil {
		return err
	}
	for _, c := range calls {
		cv, err := st.ConversationOfCall(ctx, &c.Call)
		if errors.Is(err, store.ErrNotFound) {
			continue // a caller the account never wrote to has no conversation to show it in
		}
		if err != nil {
			return err
		}
		out.Calls = append(out.Calls, CallChange{ThreadCall: c, ConversationID: cv.ID})
		convs[cv.ID] = true
	}
	ofContacts, err := st.ConversationIDsOfContacts(ctx, v.AccountID, contactIDs)
	if err != nil {
		return err
	}
	for _, id := range ofContacts {
		convs[id] = true
	}
	ids := make([]string, 0, len(convs))
	for id := range convs {
		ids = append(ids, id)
	}
	out.Conversations, err = st.InboxConversationsByID(ctx, v.AccountID, v.UserID, ids)
	return err
}
