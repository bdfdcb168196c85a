package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// The component API's JSON shapes (documented in web/embed-api.yaml). They are made for the
// components, not for integrations: display names are composed, URLs are signed for minutes.

type embedSession struct {
	User struct {
		ID        string  `json:"id"`
		FirstName string  `json:"first_name"`
		LastName  *string `json:"last_name"`
	} `json:"user"`
	Account struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"account"`
	// Deprecated is true when the caller used a publishable token.
	Deprecated bool `json:"deprecated_auth"`
}

type embedContact struct {
	ID               string  `json:"id"`
	PhoneNumber      string  `json:"phone_number"`
	FirstName        *string `json:"first_name"`
	LastName         *string `json:"last_name"`
	Name             string  `json:"name"`
	OptedOut         bool    `json:"opted_out"`
	OutboundDisabled bool    `json:"outbound_disabled"`
}

type embedNumber struct {
	ID     string  `json:"id"`
	Number string  `json:"number"`
	Name   *string `json:"name"`
	Type   string  `json:"type"`
}

type embedLastMessage struct {
	ID             string    `json:"id"`
	Direction      string    `json:"direction"`
	Status         string    `json:"status"`
	Body           *string   `json:"body"`
	HasAttachments bool      `json:"has_attachments"`
	CreatedAt      time.Time `json:"created_at"`
}

type embedLastCall struct {
	ID          string    `json:"id"`
	Status      string    `json:"status"`
	Duration    int       `json:"duration"`
	InitiatedAt time.Time `json:"initiated_at"`
}

type embedConversation struct {
	ID             string            `json:"id"`
	Contact        embedContact      `json:"contact"`
	PhoneNumber    embedNumber       `json:"phone_number"`
	LastMessage    *embedLastMessage `json:"last_message"`
	LastCall       *embedLastCall    `json:"last_call"`
	LastActivityAt *time.Time        `json:"last_activity_at"`
	UnreadCount    int               `json:"unread_count"`
	// CanReply is false when the contact opted out or outbound messages to it are disabled;
	// ReplyDisabledReason then says which (opted_out, outbound_disabled).
	CanReply            bool    `json:"can_reply"`
	ReplyDisabledReason *string `json:"reply_disabled_reason"`
}

type embedAttachment struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

// embedItem is one item of a thread: a message (kind "message") or a call (kind "call").
type embedItem struct {
	Kind           string    `json:"kind"`
	ID             string    `json:"id"`
	ConversationID string    `json:"conversation_id"`
	CreatedAt      time.Time `json:"created_at"`
	// Messages.
	Direction     string            `json:"direction,omitempty"`
	Status        string            `json:"status"`
	Body          *string           `json:"body,omitempty"`
	Attachments   []embedAttachment `json:"attachments,omitempty"`
	FailureReason *string           `json:"failure_reason,omitempty"`
	DeliveredAt   *time.Time        `json:"delivered_at,omitempty"`
	FailedAt      *time.Time        `json:"failed_at,omitempty"`
	SentByUserID  string            `json:"sent_by_user_id,omitempty"`
	AutoReply     bool              `json:"auto_reply,omitempty"`
	// Calls.
	Duration  *int            `json:"duration,omitempty"`
	From      string          `json:"from,omitempty"`
	Voicemail *embedVoicemail `json:"voicemail,omitempty"`
}

type embedVoicemail struct {
	ID       string `json:"id"`
	Duration int    `json:"duration"`
	URL      string `json:"url"`
}

type embedUnread struct {
	UnreadConversations int `json:"unread_conversations"`
	UnreadMessages      int `json:"unread_messages"`
}

type embedPagination struct {
	NextCursor     *string `json:"next_cursor"`
	PreviousCursor *string `json:"previous_cursor"`
}

type embedList[T any] struct {
	Data       []T             `json:"data"`
	Pagination embedPagination `json:"pagination"`
}

func displayName(c *store.Contact) string {
	var parts []string
	for _, p := range []*string{c.FirstName, c.LastName} {
		if p != nil && strings.TrimSpace(*p) != "" {
			parts = append(parts, strings.TrimSpace(*p))
		}
	}
	if len(parts) == 0 {
		return c.PhoneNumber
	}
	return strings.Join(parts, " ")
}

func embedConversationOut(cv *store.InboxConversation) embedConversation {
	c := &cv.Contact
	out := embedConversation{ID: cv.ID,
		Contact: embedContact{ID: c.ID, PhoneNumber: c.PhoneNumber, FirstName: c.FirstName, LastName: c.LastName,
			Name: displayName(c), OptedOut: c.OptedOut, OutboundDisabled: c.OutboundDisabled},
		PhoneNumber: embedNumber{ID: cv.PhoneNumber.ID, Number: cv.PhoneNumber.Number, Name: cv.PhoneNumber.Name, Type: cv.PhoneNumber.Type},
		UnreadCount: cv.Unread, CanReply: !c.OptedOut && !c.OutboundDisabled}
	switch {
	case c.OptedOut:
		out.ReplyDisabledReason = ptr("opted_out")
	case c.OutboundDisabled:
		out.ReplyDisabledReason = ptr("outbound_disabled")
	}
	if m := cv.LastMessage; m != nil {
		out.LastMessage = &embedLastMessage{ID: m.ID, Direction: m.Direction, Status: m.Status, Body: m.Body,
			HasAttachments: m.Type == "mms", CreatedAt: m.CreatedAt}
		out.LastActivityAt = &m.CreatedAt
	}
	if k := cv.LastCall; k != nil {
		out.LastCall = &embedLastCall{ID: k.ID, Status: k.Status, Duration: k.Duration, InitiatedAt: k.InitiatedAt}
		if out.LastActivityAt == nil || k.CreatedAt.After(*out.LastActivityAt) {
			out.LastActivityAt = &k.CreatedAt
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// idSuffix is a TypeID's time-ordered part.
func idSuffix(id string) string {
	_, s, _ := strings.Cut(id, "_")
	return s
}

// messageItem renders a message of a thread, with short-lived URLs of its attachments.
func (m *components) messageItem(ctx context.Context, v *store.Viewer, mv *store.MessageView) (embedItem, error) {
	msg := &mv.Message
	it := embedItem{Kind: "message", ID: msg.ID, ConversationID: msg.ConversationID, CreatedAt: msg.CreatedAt,
		Direction: msg.Direction, Status: msg.Status, Body: msg.Body, FailureReason: msg.FailureReason,
		DeliveredAt: msg.DeliveredAt, FailedAt: msg.FailedAt, AutoReply: msg.AutoReply}
	if msg.Direction == store.DirectionOutbound {
		it.SentByUserID = msg.Metadata["user_id"] // set by Inbox.Reply
	}
	for _, a := range mv.Attachments {
		u, err := m.inbox.AttachmentURL(ctx, v, a.ID)
		if err != nil {
			return it, err
		}
		it.Attachments = append(it.Attachments, embedAttachment{ID: a.ID, Type: a.Type, URL: u})
	}
	return it, nil
}

// callItem renders a call of a thread, with a short-lived URL of its voicemail.
func (m *components) callItem(ctx context.Context, v *store.Viewer, conversationID string, c *store.ThreadCall) (embedItem, error) {
	d := c.Duration
	it := embedItem{Kind: "call", ID: c.ID, ConversationID: conversationID, CreatedAt: c.CreatedAt, Status: c.Status,
		Duration: &d, From: c.FromNumber}
	if vm := c.Voicemail; vm != nil {
		u, err := m.inbox.RecordingURL(ctx, v, vm.RecordingID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return it, err
		}
		if err == nil {
			it.Voicemail = &embedVoicemail{ID: vm.ID, Duration: vm.Duration, URL: u}
		}
	}
	return it, nil
}

// session answers who the token is for.
func (m *components) session(c echo.Context) error {
	v := viewerOf(c)
	var out embedSession
	out.User.ID, out.User.FirstName, out.User.LastName = v.UserID, v.FirstName, v.LastName
	out.Account.ID, out.Account.Name = v.AccountID, v.AccountName
	out.Deprecated = c.Response().Header().Get("Deprecation") != ""
	return c.JSON(http.StatusOK, out)
}

// embedPage reads the after and limit query parameters of a component list.
func embedPage(c echo.Context) (store.Page, error) {
	p := store.Page{After: c.QueryParam("after"), Before: c.QueryParam("before")}
	if l := c.QueryParam("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			return p, service.Invalid("limit", "must be an integer from 1 to 100")
		}
		p.Limit = n
	}
	return p, nil
}

func (m *components) listConversations(c echo.Context) error {
	p, err := embedPage(c)
	if err != nil {
		return err
	}
	v := viewerOf(c)
	rows, cur, err := m.inbox.Conversations(c.Request().Context(), v, c.QueryParam("q"), p)
	if err != nil {
		return err
	}
	out := embedList[embedConversation]{Data: make([]embedConversation, len(rows)),
		Pagination: embedPagination{NextCursor: cur.Next, PreviousCursor: cur.Previous}}
	for i := range rows {
		out.Data[i] = embedConversationOut(&rows[i])
	}
	return c.JSON(http.StatusOK, out)
}

func (m *components) getConversation(c echo.Context) error {
	cv, err := m.inbox.Conversation(c.Request().Context(), viewerOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, embedConversationOut(cv))
}

// listItems answers one page of a thread: messages and calls, newest first.
func (m *components) listItems(c echo.Context) error {
	p, err := embedPage(c)
	if err != nil {
		return err
	}
	ctx, v, id := c.Request().Context(), viewerOf(c), c.Param("id")
	th, cur, err := m.inbox.Thread(ctx, v, id, p)
	if err != nil {
		return err
	}
	out := embedList[embedItem]{Data: make([]embedItem, 0, len(th.Messages)+len(th.Calls)),
		Pagination: embedPagination{NextCursor: cur.Next, PreviousCursor: cur.Previous}}
	for i := range th.Messages {
		it, err := m.messageItem(ctx, v, &th.Messages[i])
		if err != nil {
			return err
		}
		out.Data = append(out.Data, it)
	}
	for i := range th.Calls {
		it, err := m.callItem(ctx, v, id, &th.Calls[i])
		if err != nil {
			return err
		}
		out.Data = append(out.Data, it)
	}
	// By the ids, the order the thread pages by (a call's created_at is when it began, which a
	// carrier may report later): TypeIDs of any prefix compare by their suffix.
	sort.Slice(out.Data, func(i, j int) bool { return idSuffix(out.Data[i].ID) > idSuffix(out.Data[j].ID) })
	return c.JSON(http.StatusOK, out)
}

// decodeEmbedBody reads a small JSON body into v, refusing unknown fields.
func decodeEmbedBody(c echo.Context, v any) error {
	dec := json.NewDecoder(io.LimitReader(c.Request().Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typ):
			return service.Invalid(typ.Field, "has the wrong type")
		case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
			return &service.Error{Type: service.TypeInvalidJSON, Message: "The request body is not valid JSON."}
		}
		return service.Invalid("body", err.Error())
	}
	return nil
}

// reply sends a message as the user in a conversation.
func (m *components) reply(c echo.Context) error {
	var body struct {
		Body          string `json:"body"`
		AttachmentURL string `json:"attachment_url"`
	}
	if err := decodeEmbedBody(c, &body); err != nil {
		return err
	}
	ctx, v := c.Request().Context(), viewerOf(c)
	mv, err := m.inbox.Reply(ctx, v, c.Param("id"), service.ReplyParams{Body: body.Body, AttachmentURL: body.AttachmentURL})
	if err != nil {
		return err
	}
	it, err := m.messageItem(ctx, v, mv)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, it)
}

// markRead moves the user's read mark in a conversation.
func (m *components) markRead(c echo.Context) error {
	var body struct {
		MessageID string `json:"message_id"`
	}
	if err := decodeEmbedBody(c, &body); err != nil {
		return err
	}
	cv, err := m.inbox.MarkRead(c.Request().Context(), viewerOf(c), c.Param("id"), body.MessageID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, embedConversationOut(cv))
}

func (m *components) unread(c echo.Context) error {
	convs, msgs, err := m.inbox.Unread(c.Request().Context(), viewerOf(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, embedUnread{UnreadConversations: convs, UnreadMessages: msgs})
}
