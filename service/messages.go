package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/kit"
	"github.com/switchboard/switchboard/store"
)

// Messaging rules (decisions §5 and §7).
const (
	// MaxScheduleAhead is how far in the future send_at may be.
	MaxScheduleAhead = 60 * 24 * time.Hour
	// DefaultExpiry is how long a message may wait in the queue before it fails with expired.
	DefaultExpiry = 4 * time.Hour
	// DemoMessageLimit is how many messages a demo key may send per account.
	DemoMessageLimit = 25
	// MaxBodyLength is the longest body accepted, in characters (the longest MMS text carriers
	// take); longer is 422 message_too_long.
	MaxBodyLength = 1600
	// BlockRetryAfter is how long a number blocked after a hard failure fails fast before a send
	// to it is tried again (decisions §5: blocked until a later send succeeds).
	BlockRetryAfter = 24 * time.Hour
)

// Error types of the messaging rules.
const (
	TypeOptedOut            = "opted_out"
	TypeOutboundDisabled    = "outbound_disabled"
	TypeNoPhoneNumber       = "no_phone_number"
	TypePhoneNumberNotFound = "phone_number_not_found"
	TypeCampaignRequired    = "campaign_required"
	TypeTollFreeUnverified  = "toll_free_unverified"
	TypeMessageTooLong      = "message_too_long"
	TypeDemoMessageLimit    = "demo_message_limit"
	TypeDemoAPIKey          = "demo_api_key"
)

// Pacing is each sender number's throughput by number type, in messages per second; messages
// over it wait in the queue. Zero fields take the defaults; a negative rate means unpaced.
type Pacing struct {
	// Local defaults to 10/s.
	Local float64
	// TollFree defaults to 3/s.
	TollFree float64
	// ShortCode defaults to 100/s.
	ShortCode float64
	// Demo (the shared demo number) defaults to 1/s.
	Demo float64
}

func (p Pacing) withDefaults() Pacing {
	or := func(v, d float64) float64 {
		if v == 0 {
			return d
		}
		return v
	}
	return Pacing{Local: or(p.Local, 10), TollFree: or(p.TollFree, 3), ShortCode: or(p.ShortCode, 100), Demo: or(p.Demo, 1)}
}

// interval is the time between two messages of a number of this type; 0 when unpaced.
func (p Pacing) interval(numberType string) time.Duration {
	rate := map[string]float64{store.NumberLocal: p.Local, store.NumberTollFree: p.TollFree,
		store.NumberShortCode: p.ShortCode, store.NumberDemo: p.Demo}[numberType]
	if rate <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / rate)
}

// MessagesConfig wires the Messages service.
type MessagesConfig struct {
	// Store and Carriers are required.
	Store    *store.Store
	Carriers *Carriers
	// PublicURL is the installation's public base URL, the root of attachment and file URLs.
	// Defaults to https://localhost:8443.
	PublicURL string
	// Pacing is the per-sender throughput. Defaults to local 10/s, toll-free 3/s, short code
	// 100/s, demo 1/s.
	Pacing Pacing
	// Expiry is how long a message may wait in the queue. Defaults to 4 h.
	Expiry time.Duration
	// HTTPClient fetches attachments. Defaults to a client with a 10 s timeout.
	HTTPClient *http.Client
	// InboundMediaAttempts is how many times an inbound message's files are fetched from the
	// carrier before the missing ones are unavailable (River waits attempt⁴ seconds between
	// attempts). Defaults to 10, about 4.3 hours.
	InboundMediaAttempts int
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Messages sends and receives SMS and MMS through the carriers, durably: a message is written
// into the outbound queue in the statement that stores it, the dispatch (dispatch.go) submits it
// to its number's carrier exactly once (the message id is the carrier's client reference), and
// receipts (receipts.go) and inbound messages arrive through Reports.
type Messages struct {
	cfg    MessagesConfig
	signer *fileSigner
	// receipts is the group commit of receipts.
	receipts *store.Batcher[receiptItem, struct{}]
	// receiptConn holds the receipts' connection while they come.
	receiptConn heldConn
	// sends is the group commit of sends (send_batch.go); sendConn holds its flushes' connection
	// while sends come, sendBatchSizes counts its flushes, sendBatchTimes times its phases.
	sends          *store.Batcher[*sendItem, sendOutcome]
	sendConn       heldConn
	sendBatchSizes prometheus.Histogram
	sendBatchTimes *prometheus.HistogramVec
	// plain keeps the sends' contexts that need nothing special, for the flushes' writes without
	// a read (send_batch.go).
	plain   plainContexts
	metrics *carrierMetrics
}

// NewMessages returns the Messages service.
func NewMessages(cfg MessagesConfig) (*Messages, error) {
	if cfg.Store == nil || cfg.Carriers == nil {
		return nil, errors.New("service: NewMessages needs Store and Carriers")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = "https://localhost:8443"
	}
	cfg.PublicURL = strings.TrimSuffix(cfg.PublicURL, "/")
	cfg.Pacing = cfg.Pacing.withDefaults()
	if cfg.Expiry == 0 {
		cfg.Expiry = DefaultExpiry
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: AttachmentFetchTimeout}
	}
	if cfg.InboundMediaAttempts <= 0 {
		cfg.InboundMediaAttempts = defaultInboundMediaAttempts
	}
	m := &Messages{cfg: cfg, signer: &fileSigner{store: cfg.Store}, metrics: newCarrierMetrics()}
	m.receipts = store.NewBatcher(receiptBatch, receiptParallel, m.applyReceipts).Linger(receiptLinger)
	m.sends, m.sendBatchSizes, m.sendBatchTimes = m.sendBatches(), newSendBatchSizes(), newSendBatchTimes()
	return m, nil
}

// Register adds the service's job workers.
func (m *Messages) Register(w *river.Workers) {
	river.AddWorker(w, &dispatchWorker{m: m})
	river.AddWorker(w, &inboundMediaWorker{m: m})
}

func (m *Messages) now() time.Time { return m.cfg.Now().UTC().Truncate(time.Microsecond) }

// ContactParams select or create the recipient contact of a send.
type ContactParams struct {
	PhoneNumber string
	// Email, FirstName, LastName, Metadata and OutboundDisabled fill a contact the send creates;
	// an existing contact is left as it is. A contact created with outbound disabled refuses the
	// send, which then creates nothing.
	Email, FirstName, LastName *string
	Metadata                   map[string]string
	OutboundDisabled           bool
}

// SendParams is a send request in either of its two shapes: Conversation, or To with an
// optional From.
type SendParams struct {
	ProjectID, AccountID string
	// Demo is true when a demo key sends: only through the demo number, 25 per account.
	Demo bool
	// Conversation is the conversation form: the contact and optionally the sending number.
	Conversation *ConversationParams
	// To and From are the other form.
	To, From    *string
	Body        *string
	Attachments []string
	Metadata    map[string]string
	SendAt      *time.Time
	// ShortenLinks replaces each URL of the body by a tracked short link (settings.link_shortening);
	// segments are counted on the shortened body.
	ShortenLinks bool
}

// ConversationParams selects (or creates) the conversation of a send.
type ConversationParams struct {
	Contact ContactParams
	// PhoneNumber is the sending number: E.164, short code or pn_ id; empty for the default.
	PhoneNumber *string
}

// Send validates a send, then stores the message (queued, or scheduled for a future send_at), its
// contact and conversation when new, and its queue row, all or nothing. A plain send shares the
// read and the write with the sends made at the same time (send_batch.go); the others, and a plain
// send the batch could not write, are written here in one transaction (or one statement).
func (m *Messages) Send(ctx context.Context, p SendParams) (*store.MessageView, error) {
	now := m.now()
	recipient, from, contact, err := m.validate(p, now)
	if err != nil {
		return nil, err
	}
	body := ""
	if p.Body != nil {
		body = *p.Body
	}
	if body == "" {
		p.Body = nil // attachments only: the body is null
	}
	seg := Segment(body)
	msg := &store.Message{
		ID: store.NewID(store.PrefixMessage), ProjectID: p.ProjectID, AccountID: p.AccountID,
		Direction: store.DirectionOutbound, Status: store.StatusQueued, Body: p.Body, Metadata: p.Metadata,
		Encoding: seg.Encoding, Segments: seg.Segments, Type: MessageType(seg, len(p.Attachments)),
		ToNumber: recipient, CreatedAt: now, UpdatedAt: now, Traceparent: kit.Traceparent(ctx),
	}
	if p.SendAt != nil && p.SendAt.After(now) {
		at := p.SendAt.UTC().Truncate(time.Microsecond)
		msg.Status, msg.SendAt = store.StatusScheduled, &at
	}
	atts := make([]store.Attachment, len(p.Attachments))
	for i, u := range p.Attachments {
		atts[i] = store.Attachment{ID: store.NewID(store.PrefixAttachment), ProjectID: p.ProjectID, MessageID: msg.ID,
			Position: i, URL: u, Type: guessAttachmentType(u)}
	}
	if batchable(ctx, p, contact) {
		out, err := m.sends.Do(ctx, &sendItem{p: p, from: from, contact: contact, msg: *msg, now: now, queued: time.Now()})
		if err != nil {
			return nil, err
		}
		if out.err != nil || out.view != nil {
			return out.view, out.err
		}
		// The batch wrote nothing of it: written here, as a send that is not batched.
	}
	view := &store.MessageView{Attachments: atts}
	st := m.cfg.Store
	// One read gives the account, the sender and what exists of the pair. A plain statement
	// reads the same committed data as one inside the transaction would (read committed).
	sc, err := st.LoadSendContext(ctx, p.ProjectID, p.AccountID, from, recipient)
	if err != nil {
		return nil, err
	}
	if sc.QuietHours { // held outside the account's sending window (quiet.go)
		if err := m.holdForQuietHours(ctx, sc, msg, now); err != nil {
			return nil, err
		}
	}
	write := func(tx *store.Store) error {
		if sc.Archived {
			return Errorf(TypeAccountArchived, "the account is archived and cannot send messages")
		}
		sender, err := m.sender(ctx, tx, p, from, sc.Sender)
		if err != nil {
			return err
		}
		contact.ProjectID, contact.AccountID = p.ProjectID, p.AccountID
		var known *store.Pair
		if sc.Sender != nil && sc.Sender.ID == sender.ID {
			known = sc.Known // read with the sender; a demo send goes through another number
		}
		pair, err := tx.ResolvePair(ctx, contact, sender.ID, now, known)
		if err != nil {
			return err
		}
		if err := sendable(pair.Contact, recipient); err != nil {
			return err
		}
		if pair.ConversationCreated {
			if err := conversationEvent(ctx, tx, pair.Conversation, pair.Contact, sender); err != nil {
				return err
			}
		}
		withPair(msg, pair.Conversation.ID, pair.Contact.ID, sender)
		if p.ShortenLinks && body != "" {
			short, err := ShortenLinks(ctx, tx, m.cfg.PublicURL, LinkOwner{ProjectID: p.ProjectID, AccountID: p.AccountID, MessageID: msg.ID}, body)
			if err != nil {
				return err
			}
			seg := Segment(short)
			msg.Body, msg.Encoding, msg.Segments, msg.Type = &short, seg.Encoding, seg.Segments, MessageType(seg, len(p.Attachments))
		}
		view.Contact, view.PhoneNumber = *pair.Contact, *sender
		return tx.InsertOutbound(ctx, msg, atts)
	}
	if p.Demo || p.ShortenLinks || !sc.Known.Complete() {
		// Something else is written with the message: a contact, a conversation and its event,
		// links, or the demo allowance.
		err = st.Tx(ctx, write)
	} else {
		// Only the message and its queue row, which InsertOutbound writes atomically on its own:
		// the common send takes no transaction of its own (no BEGIN and COMMIT round trips).
		err = write(st)
	}
	if err != nil {
		return nil, err
	}
	view.Message = *msg
	return view, nil
}

// validate checks the shape of a send and returns the recipient, the sender reference and the
// contact to find or create.
func (m *Messages) validate(p SendParams, now time.Time) (recipient, from string, contact store.Contact, err error) {
	switch {
	case p.Conversation != nil && (p.To != nil || p.From != nil):
		field := "to"
		if p.To == nil {
			field = "from"
		}
		return "", "", contact, Invalid(field, "cannot be combined with conversation; use one form or the other")
	case p.Conversation == nil && p.To == nil:
		return "", "", contact, Invalid("to", "is required (or give conversation.contact)")
	}
	field := "to"
	if p.Conversation != nil {
		c := p.Conversation.Contact
		contact = store.Contact{PhoneNumber: c.PhoneNumber, Email: c.Email, FirstName: c.FirstName, LastName: c.LastName,
			Metadata: c.Metadata, OutboundDisabled: c.OutboundDisabled}
		field = "conversation.contact.phone_number"
		if p.Conversation.PhoneNumber != nil {
			from = *p.Conversation.PhoneNumber
		}
	} else {
		contact.PhoneNumber = *p.To
		if p.From != nil {
			from = *p.From
		}
	}
	if contact.PhoneNumber, err = NormalizeE164(contact.PhoneNumber); err != nil {
		return "", "", contact, Invalid(field, ErrNotE164.Error())
	}
	if hasNUL(p.Body, contact.FirstName, contact.LastName, contact.Email) || hasNULValues(p.Metadata) || hasNULValues(contact.Metadata) {
		return "", "", contact, Invalid("body", "must not contain NUL characters (\\u0000)")
	}
	hasBody := p.Body != nil && *p.Body != ""
	if !hasBody && len(p.Attachments) == 0 {
		return "", "", contact, Invalid("body", "is required when there are no attachments")
	}
	if len(p.Attachments) > MaxAttachments {
		return "", "", contact, Invalid("attachments", fmt.Sprintf("must have at most %d items", MaxAttachments))
	}
	if hasBody && utf8.RuneCountInString(*p.Body) > MaxBodyLength {
		return "", "", contact, Errorf(TypeMessageTooLong, "the body is longer than %d characters", MaxBodyLength)
	}
	if p.SendAt != nil && p.SendAt.After(now.Add(MaxScheduleAhead)) {
		return "", "", contact, Invalid("send_at", "must be at most 60 days ahead")
	}
	return contact.PhoneNumber, from, contact, nil
}

// hasNUL reports whether any string contains a NUL character, which PostgreSQL text cannot hold.
func hasNUL(ss ...*string) bool {
	for _, s := range ss {
		if s != nil && strings.ContainsRune(*s, 0) {
			return true
		}
	}
	return false
}

func hasNULValues(m map[string]string) bool {
	for k, v := range m {
		if strings.ContainsRune(k, 0) || strings.ContainsRune(v, 0) {
			return true
		}
	}
	return false
}

// sender resolves and checks the sending number.
func (m *Messages) sender(ctx context.Context, tx *store.Store, p SendParams, from string, s *store.Sender) (*store.PhoneNumber, error) {
	if p.Demo {
		demo, err := tx.DemoNumber(ctx)
		if errors.Is(err, store.ErrNotFound) {
			return nil, Errorf(TypeNoPhoneNumber, "this installation has no demo number to send demo messages through")
		}
		if err != nil {
			return nil, err
		}
		if from != "" && from != demo.ID && from != demo.Number {
			return nil, Errorf(TypeDemoAPIKey, "demo API keys can only send through the demo number %s; use a live key", demo.Number)
		}
		ok, err := tx.TakeDemoSend(ctx, p.AccountID, DemoMessageLimit)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, Errorf(TypeDemoMessageLimit, "demo keys can send at most %d messages per account", DemoMessageLimit)
		}
		return demo, nil
	}
	if s == nil {
		if from == "" {
			return nil, Errorf(TypeNoPhoneNumber, "the account has no phone number to send from; purchase one first")
		}
		return nil, Errorf(TypePhoneNumberNotFound, "%s is not a phone number of this account", from)
	}
	switch s.Type {
	case store.NumberLocal:
		if s.CampaignID == nil || s.CampaignStatus == nil || *s.CampaignStatus != store.CampaignActive ||
			s.AttachmentStatus == nil || *s.AttachmentStatus != store.AttachmentDone {
			return nil, Errorf(TypeCampaignRequired, "the local number %s is not attached to an active campaign", s.Number)
		}
	case store.NumberTollFree:
		if s.TollFreeActive == 0 {
			return nil, Errorf(TypeTollFreeUnverified, "the toll-free number %s has no active toll-free campaign", s.Number)
		}
	}
	return &s.PhoneNumber, nil
}

// Get returns a project's message.
func (m *Messages) Get(ctx context.Context, projectID, id string) (*store.MessageView, error) {
	return m.cfg.Store.GetMessage(ctx, projectID, id)
}

// List returns a page of an account's messages, of one conversation when conversationID is set.
func (m *Messages) List(ctx context.Context, projectID, accountID, conversationID string, p store.Page) ([]store.MessageView, store.Cursors, error) {
	return m.cfg.Store.ListMessages(ctx, projectID, accountID, conversationID, p)
}

// Cancel cancels a scheduled message; any other state is a conflict.
func (m *Messages) Cancel(ctx context.Context, projectID, id string) (*store.MessageView, error) {
	err := m.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		if _, err := tx.GetMessage(ctx, projectID, id); err != nil {
			return err
		}
		ok, err := tx.UpdateMessage(ctx, id, []string{store.StatusScheduled},
			map[string]any{"status": store.StatusCanceled, "updated_at": m.now()})
		if err != nil {
			return err
		}
		if !ok {
			return Errorf(TypeConflict, "only a scheduled message can be canceled")
		}
		return tx.DropOutbound(ctx, []string{id})
	})
	if err != nil {
		return nil, err
	}
	return m.cfg.Store.GetMessage(ctx, projectID, id)
}
