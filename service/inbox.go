package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard/switchboard/store"
)

// Error types of the embedded components' authentication.
const (
	TypeMissingToken = "missing_token"
	TypeInvalidToken = "invalid_token"
	TypeTokenExpired = "token_expired"
)

// InboxConfig wires an Inbox.
type InboxConfig struct {
	// Store is the database. Required.
	Store *store.Store
	// Tokens verifies user tokens. Required.
	Tokens *Tokens
	// Messages sends the users' replies and signs attachment URLs. Required.
	Messages *Messages
	// Voice signs recording URLs. Required.
	Voice *Voice
	// PollInterval is how often a live stream looks for changes when nothing wakes it: on SQLite,
	// which has no notifications, the delay of a live update; on PostgreSQL a safety net behind
	// LISTEN/NOTIFY. Defaults to 400 ms on SQLite and 15 s on PostgreSQL.
	PollInterval time.Duration
	// Window is how far behind its position a stream reads again, in case a transaction that
	// stamped a change earlier committed later. Defaults to 15 s.
	Window time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Inbox is what a user sees through the embedded components: the account's conversations with
// the user's read state, a thread, replies sent as the user, and the live changes of all that.
// It authenticates the components' tokens. It is not the public API, which Messages serves.
type Inbox struct {
	cfg  InboxConfig
	feed *feed
}

// NewInbox returns the inbox service.
func NewInbox(cfg InboxConfig) (*Inbox, error) {
	if cfg.Store == nil || cfg.Tokens == nil || cfg.Messages == nil || cfg.Voice == nil {
		return nil, errors.New("service: InboxConfig needs Store, Tokens, Messages and Voice")
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 400 * time.Millisecond
		if cfg.Store.Dialect() == store.Postgres {
			cfg.PollInterval = 15 * time.Second
		}
	}
	if cfg.Window == 0 {
		cfg.Window = 15 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Inbox{cfg: cfg, feed: newFeed(cfg.Store, cfg.Logger)}, nil
}

// Close stops listening for changes (streams still open then poll only); the next stream that
// opens starts listening again. A process that exits needs not call it.
func (in *Inbox) Close() { in.feed.close() }

// ViewerOfToken authenticates a user token: its signature, expiry and issuer, and that its user
// still exists in the token's account. A refusal is token_expired or invalid_token.
func (in *Inbox) ViewerOfToken(ctx context.Context, raw string) (*store.Viewer, error) {
	claims, err := in.cfg.Tokens.Verify(ctx, raw)
	switch {
	case errors.Is(err, ErrTokenExpired):
		return nil, &Error{Type: TypeTokenExpired, Message: "The token has expired: ask your application for a new one."}
	case errors.Is(err, ErrTokenInvalid):
		return nil, &Error{Type: TypeInvalidToken, Message: "The token is not valid: it is malformed, not signed by this installation, or its user was deleted."}
	case err != nil:
		return nil, err
	}
	v, err := in.cfg.Store.ViewerOfUser(ctx, claims.Subject, claims.Account)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &Error{Type: TypeInvalidToken, Message: "The token's user no longer exists."}
	}
	return v, err
}

// ViewerOfPublishableToken authenticates the deprecated publishable token of an account with the
// id of one of its users. A refusal is invalid_token.
func (in *Inbox) ViewerOfPublishableToken(ctx context.Context, secret, userID string) (*store.Viewer, error) {
	if !strings.HasPrefix(secret, store.PublishableTokenPrefix) || userID == "" {
		return nil, &Error{Type: TypeInvalidToken, Message: "A publishable token needs its user: pass user_id with token."}
	}
	v, err := in.cfg.Store.ViewerOfPublishableToken(ctx, secret, userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &Error{Type: TypeInvalidToken, Message: "The publishable token is unknown or revoked, or the user is not of its account."}
	}
	return v, err
}

// Conversations returns one page of the viewer's account's conversations, most recent activity
// first, with the viewer's unread counts; search filters by the contact's number or name.
func (in *Inbox) Conversations(ctx context.Context, v *store.Viewer, search string, p store.Page) ([]store.InboxConversation, store.Cursors, error) {
	if len(search) > 100 {
		return nil, store.Cursors{}, Invalid("q", "must be at most 100 characters")
	}
	return in.cfg.Store.InboxConversations(ctx, v.AccountID, v.UserID, search, p)
}

// Conversation returns one conversation of the viewer's account; another account's is not_found.
func (in *Inbox) Conversation(ctx context.Context, v *store.Viewer, id string) (*store.InboxConversation, error) {
	return in.cfg.Store.InboxConversation(ctx, v.AccountID, v.UserID, id)
}

// Thread is one page of a conversation's thread: its messages and the calls among them.
type Thread struct {
	Messages []store.MessageView
	Calls    []store.ThreadCall
}

// Thread returns one page of a conversation's thread, newest first: its messages and the calls
// among them (see store.Thread).
func (in *Inbox) Thread(ctx context.Context, v *store.Viewer, conversationID string, p store.Page) (*Thread, store.Cursors, error) {
	msgs, calls, cur, err := in.cfg.Store.Thread(ctx, v.AccountID, conversationID, p)
	if err != nil {
		return nil, cur, err
	}
	return &Thread{Messages: msgs, Calls: calls}, cur, nil
}

// ReplyParams is a reply a user writes in a conversation.
type ReplyParams struct {
	Body string
	// AttachmentURL is an http(s) URL of a file to send with it; empty for none.
	AttachmentURL string
}

// Reply sends a message as the viewer in a conversation of its account, from the conversation's
// number to its contact, with the sender's user id in the message's metadata (user_id).
func (in *Inbox) Reply(ctx context.Context, v *store.Viewer, conversationID string, r ReplyParams) (*store.MessageView, error) {
	cv, err := in.cfg.Store.InboxConversation(ctx, v.AccountID, v.UserID, conversationID)
	if err != nil {
		return nil, err
	}
	body := strings.TrimSpace(r.Body)
	if body == "" && r.AttachmentURL == "" {
		return nil, Invalid("body", "write a message or attach a file")
	}
	p := SendParams{ProjectID: v.ProjectID, AccountID: v.AccountID, Metadata: map[string]string{"user_id": v.UserID},
		Conversation: &ConversationParams{Contact: ContactParams{PhoneNumber: cv.Contact.PhoneNumber}, PhoneNumber: &cv.PhoneNumberID}}
	if body != "" {
		p.Body = &body
	}
	if r.AttachmentURL != "" {
		u, err := url.Parse(r.AttachmentURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, Invalid("attachment_url", "is not an absolute http(s) URL")
		}
		p.Attachments = []string{r.AttachmentURL}
	}
	return in.cfg.Messages.Send(ctx, p)
}

// MarkRead moves the viewer's read mark in a conversation to upTo (a message of it), or to its
// newest message when upTo is empty, and returns the conversation as the inbox then shows it. A
// mark never moves back. The account's live streams hear of it.
func (in *Inbox) MarkRead(ctx context.Context, v *store.Viewer, conversationID, upTo string) (*store.InboxConversation, error) {
	err := in.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		moved, err := tx.MarkConversationRead(ctx, v.AccountID, v.UserID, conversationID, upTo, time.Now())
		if errors.Is(err, store.ErrNotFound) && upTo != "" {
			if _, cerr := tx.InboxConversation(ctx, v.AccountID, v.UserID, conversationID); cerr == nil {
				return Invalid("message_id", "is not a message of this conversation")
			}
		}
		if err != nil || !moved {
			return err
		}
		return tx.NotifyEmbed(ctx, v.AccountID)
	})
	if err != nil {
		return nil, err
	}
	return in.Conversation(ctx, v, conversationID)
}

// Unread counts the viewer's unread conversations and messages.
func (in *Inbox) Unread(ctx context.Context, v *store.Viewer) (conversations, messages int, err error) {
	return in.cfg.Store.UnreadConversations(ctx, v.AccountID, v.UserID)
}

// AttachmentURL returns a short-lived URL of an attachment of the viewer's project.
func (in *Inbox) AttachmentURL(ctx context.Context, v *store.Viewer, id string) (string, error) {
	return in.cfg.Messages.AttachmentLocation(ctx, v.ProjectID, id)
}

// RecordingURL returns a short-lived URL of a recording of the viewer's project.
func (in *Inbox) RecordingURL(ctx context.Context, v *store.Viewer, id string) (string, error) {
	return in.cfg.Voice.RecordingLocation(ctx, v.ProjectID, id)
}

// EmbedOrigins returns the origins allowed to frame the components of an account's project.
func (in *Inbox) EmbedOrigins(ctx context.Context, accountID string) ([]string, error) {
	return in.cfg.Store.EmbedOriginsOfAccount(ctx, accountID)
}

// EmbedOriginsOfPublishableToken returns the origins allowed to frame the components of a
// publishable token's project; none for an unknown token.
func (in *Inbox) EmbedOriginsOfPublishableToken(ctx context.Context, secret string) ([]string, error) {
	project, err := in.cfg.Store.ProjectOfPublishableToken(ctx, secret)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return in.cfg.Store.EmbedOrigins(ctx, project)
}

// AllowEmbedOrigin lets an origin frame a project's components (see NormalizeOrigin), and
// returns the project's origins; the operator's commands and console call it.
func (in *Inbox) AllowEmbedOrigin(ctx context.Context, projectID, origin string) ([]string, error) {
	o, err := NormalizeOrigin(origin)
	if err != nil {
		return nil, Invalid("origin", err.Error())
	}
	if err := in.cfg.Store.AddEmbedOrigin(ctx, projectID, o); err != nil {
		return nil, err
	}
	return in.cfg.Store.EmbedOrigins(ctx, projectID)
}

// NormalizeOrigin checks that s is a web origin (https://host[:port], or http:// for loopback
// hosts during development) and returns it in its canonical form: lowercase, without a default
// port or a trailing slash.
func NormalizeOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%q is not an origin such as https://app.example.com", s)
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	loopback := host == "localhost" || host == "127.0.0.1" || host == "::1"
	if scheme != "https" && (scheme != "http" || !loopback) {
		return "", fmt.Errorf("%q: an embedding origin must be https (http only for localhost)", s)
	}
	if strings.ContainsAny(host, " ;,'\"*") {
		return "", fmt.Errorf("%q is not an origin", s)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" || (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		return scheme + "://" + host, nil
	}
	return scheme + "://" + host + ":" + port, nil
}
