package server

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/service"
)

// acquireStream counts a live stream of a user, refusing one over EmbedConfig.MaxStreams.
func (m *components) acquireStream(user string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.open[user] >= m.cfg.MaxStreams {
		return false
	}
	m.open[user]++
	return true
}

func (m *components) releaseStream(user string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.open[user]--; m.open[user] <= 0 {
		delete(m.open, user)
	}
}

// stream is the live stream (Server-Sent Events) of what changes for the user: "message" and
// "call" (a thread item, as the items list shows it), "conversation" (as the inbox shows it)
// and "unread" (the totals); "reset" asks the client to reload everything, when it resumes from
// further back than the server keeps. Each event's id is the stream's position; a client that
// reconnects with it in Last-Event-ID misses nothing (it may see a change twice: each carries the
// current state). Changes reach the stream through the database: LISTEN/NOTIFY on PostgreSQL,
// whichever instance made them; polling on SQLite.
func (m *components) stream(c echo.Context) error {
	v := viewerOf(c)
	var position time.Time
	if last := c.Request().Header.Get("Last-Event-ID"); last != "" {
		ms, err := strconv.ParseInt(last, 10, 64)
		if err != nil || ms <= 0 {
			return service.Invalid("Last-Event-ID", "is not an id this stream sent")
		}
		position = time.UnixMilli(ms)
	}
	if !m.acquireStream(v.UserID) {
		c.Response().Header().Set("Retry-After", "5")
		return &service.Error{Type: "rate_limited", Message: fmt.Sprintf("This user has %d live streams open already.", m.cfg.MaxStreams)}
	}
	defer m.releaseStream(v.UserID)
	ending := m.streamsEnding()
	ctx := c.Request().Context()
	st, err := m.inbox.OpenStream(ctx, v, position)
	reset := errors.Is(err, service.ErrStreamTooOld)
	if reset {
		st, err = m.inbox.OpenStream(ctx, v, time.Time{})
	}
	if err != nil {
		return err
	}
	defer st.Close()

	w := c.Response()
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	send := func(event, id string, data any) error {
		b, err := json.Marshal(data)
		if err != nil {
			return err
		}
		if id != "" {
			_, err = fmt.Fprintf(w, "event: %s\nid: %s\ndata: %s\n\n", event, id, b)
		} else {
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		}
		return err
	}
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil {
		return nil
	}
	if reset {
		if err := send("reset", "", map[string]any{}); err != nil {
			return nil
		}
	}
	w.Flush()
	heartbeat := time.NewTicker(m.cfg.Heartbeat)
	defer heartbeat.Stop()
	first := true
	for {
		ch, err := st.Next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				m.s.log.Warn("embed stream: read changes", "request_id", requestID(c), "err", err)
			}
			return nil // the client reconnects with its Last-Event-ID
		}
		if err := m.sendChanges(c, send, ch, first); err != nil {
			return nil
		}
		first = false
		w.Flush()
	wait:
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-ending:
				return nil
			case <-heartbeat.C:
				if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
					return nil
				}
				w.Flush()
			case <-st.Wake():
				// Changes come in bursts (a send, its receipt): let them gather a moment.
				time.Sleep(50 * time.Millisecond)
				break wait
			case <-time.After(st.PollInterval()):
				break wait
			}
		}
	}
}

// sendChanges writes one read's changes: items first, then the conversations they changed,
// then the totals.
func (m *components) sendChanges(c echo.Context, send func(event, id string, data any) error, ch *service.Changes, first bool) error {
	if ch.Empty() && !first {
		return nil
	}
	ctx, v := c.Request().Context(), viewerOf(c)
	id := strconv.FormatInt(ch.Position.UnixMilli(), 10)
	for i := range ch.Messages {
		it, err := m.messageItem(ctx, v, &ch.Messages[i])
		if err != nil {
			return err
		}
		if err := send("message", id, it); err != nil {
			return err
		}
	}
	for i := range ch.Calls {
		it, err := m.callItem(ctx, v, ch.Calls[i].ConversationID, &ch.Calls[i].ThreadCall)
		if err != nil {
			return err
		}
		if err := send("call", id, it); err != nil {
			return err
		}
	}
	for i := range ch.Conversations {
		if err := send("conversation", id, embedConversationOut(&ch.Conversations[i])); err != nil {
			return err
		}
	}
	return send("unread", id, embedUnread{UnreadConversations: ch.UnreadConversations, UnreadMessages: ch.UnreadMessages})
}

// demoPage serves the demo host page: the components embedded as a customer's app would.
func (m *components) demoPage(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	return m.file(c, "demo.html")
}

// demoToken mints a fresh token for the demo user: the demo page's token callback, standing for
// the customer's own backend, which would call POST /users/{user_id}/tokens with its API key.
func (m *components) demoToken(c echo.Context) error {
	d := m.cfg.Demo
	if subtle.ConstantTimeCompare([]byte(c.Request().Header.Get("X-Demo-Secret")), []byte(d.Secret)) != 1 {
		return &service.Error{Type: service.TypeInvalidToken, Message: "The demo secret is missing or wrong: open the link `switchboard serve --dev-key` printed."}
	}
	tok, err := m.s.tokens.Issue(c.Request().Context(), d.UserID, d.AccountID, service.TokenDefaultSeconds)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, map[string]string{"token": tok})
}
