package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/riverqueue/river"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard/switchboard/carriers"
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

// Messages sends and receives SMS and MMS through the carriers, durably: a message and its
// dispatch job are written in one transaction, the dispatch submits it to its number's carrier
// exactly once (the message id is the carrier's client reference), and receipts and inbound
// messages arrive through Reports.
type Messages struct {
	cfg    MessagesConfig
	signer *fileSigner
	// claims, sent and receipts are the group commits of the outbound path.
	claims   *store.Batcher[string, claim]
	sent     *store.Batcher[store.Submitted, struct{}]
	receipts *store.Batcher[receiptItem, struct{}]
	metrics  *carrierMetrics
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
	m.claims = store.NewBatcher(outboundBatch, outboundParallel, m.claimAll)
	m.sent = store.NewBatcher(outboundBatch, outboundParallel, m.recordSent)
	m.receipts = store.NewBatcher(outboundBatch, outboundParallel, m.applyReceipts)
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
// contact and conversation when new, and its dispatch job in one transaction.
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
	view := &store.MessageView{Attachments: atts}
	st := m.cfg.Store
	// One read gives the account, the sender and what exists of the pair. A plain statement
	// reads the same committed data as one inside the transaction would (read committed).
	sc, err := st.LoadSendContext(ctx, p.ProjectID, p.AccountID, from, recipient)
	if err != nil {
		return nil, err
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
		switch {
		case pair.Contact.OptedOut:
			return Errorf(TypeOptedOut, "the contact %s has opted out of messages from this account", recipient)
		case pair.Contact.OutboundDisabled:
			return Errorf(TypeOutboundDisabled, "outbound messaging is disabled for the contact %s", recipient)
		}
		if pair.ConversationCreated {
			if err := conversationEvent(ctx, tx, pair.Conversation, pair.Contact, sender); err != nil {
				return err
			}
		}
		msg.ConversationID, msg.ContactID = pair.Conversation.ID, pair.Contact.ID
		msg.PhoneNumberID, msg.SenderType, msg.FromNumber, msg.Carrier = sender.ID, sender.Type, sender.Number, sender.Carrier
		if p.ShortenLinks && body != "" {
			short, err := ShortenLinks(ctx, tx, m.cfg.PublicURL, LinkOwner{ProjectID: p.ProjectID, AccountID: p.AccountID, MessageID: msg.ID}, body)
			if err != nil {
				return err
			}
			seg := Segment(short)
			msg.Body, msg.Encoding, msg.Segments, msg.Type = &short, seg.Encoding, seg.Segments, MessageType(seg, len(p.Attachments))
		}
		view.Contact, view.PhoneNumber = *pair.Contact, *sender
		return tx.InsertMessageAndJob(ctx, msg, atts, river.InsertManyParams{Args: dispatchArgs{MessageID: msg.ID}, InsertOpts: dispatchOpts(msg.SendAt)})
	}
	if p.Demo || p.ShortenLinks || !sc.Known.Complete() {
		// Something else is written with the message: a contact, a conversation and its event,
		// links, or the demo allowance.
		err = st.Tx(ctx, write)
	} else {
		// Only the message and its job, which InsertMessageAndJob writes atomically on its own:
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
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m.cfg.Store.GetMessage(ctx, projectID, id)
}

// dispatchArgs is the job that hands one message to its carrier.
type dispatchArgs struct {
	MessageID string `json:"message_id"`
}

// Kind names the job.
func (dispatchArgs) Kind() string { return "dispatch_message" }

// MessagesQueue is the job queue of message dispatch.
const MessagesQueue = "messages"

// InsertOpts puts dispatch jobs in their own queue.
func (dispatchArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: MessagesQueue} }

func dispatchOpts(sendAt *time.Time) *river.InsertOpts {
	if sendAt == nil {
		return nil
	}
	return &river.InsertOpts{Queue: MessagesQueue, ScheduledAt: *sendAt}
}

type dispatchWorker struct {
	river.WorkerDefaults[dispatchArgs]
	m *Messages
}

func (w *dispatchWorker) Work(ctx context.Context, j *river.Job[dispatchArgs]) error {
	return w.m.dispatch(ctx, j.Args.MessageID)
}

// slotTolerance is how early a message may take its pacing slot.
const slotTolerance = 5 * time.Millisecond

// resubmitAfter is how long a message may stay `sending` before its own dispatch submits it
// again (the dispatch that was submitting it presumably died with its process).
const resubmitAfter = 10 * time.Second

// Group commits of the outbound path (store.Batcher): the most messages per shared transaction,
// and the most such transactions at a time.
const (
	outboundBatch    = 200
	outboundParallel = 1
)

// claim is what a dispatch learned when it claimed its message: the message to submit (nil when
// there is nothing to submit now) and how long its job should wait before it looks again.
type claim struct {
	msg  *store.Message
	wait time.Duration
}

// dispatch hands one message to its carrier. Concurrent dispatches share their transactions: a
// claim (read under a lock, moved to `sending` or given its pacing slot), then each submits its
// own message, then a record of the accepted submissions. It is safe to run more than once: a
// final state ends the job, and a message left `sending` is submitted again with the same
// reference (the carrier answers with the first submission).
func (m *Messages) dispatch(ctx context.Context, id string) error {
	c, err := m.claims.Do(ctx, id)
	if err != nil {
		return err
	}
	if c.msg != nil {
		ctx = kit.WithTraceparent(ctx, c.msg.Traceparent) // the trace of the request that sent it
		carrierID, err := m.submit(ctx, c.msg)
		if err != nil {
			return err
		}
		if carrierID != nil {
			if _, err := m.sent.Do(ctx, store.Submitted{ID: id, CarrierID: *carrierID}); err != nil {
				return err
			}
		}
	}
	if c.wait > 0 {
		return river.JobSnooze(c.wait)
	}
	return nil
}

// claimAll claims the messages of concurrent dispatches in one transaction, which need not wait
// for the disk: each job's completion does, and a lost claim is redone by the job's next run.
func (m *Messages) claimAll(ctx context.Context, ids []string) ([]claim, error) {
	out := make([]claim, len(ids))
	now := m.now()
	err := m.cfg.Store.TxAsync(ctx, func(tx *store.Store) error {
		msgs, err := tx.LockMessages(ctx, ids)
		if err != nil {
			return err
		}
		var phones, accounts []string
		for _, msg := range msgs {
			phones, accounts = append(phones, msg.ToNumber), append(accounts, msg.AccountID)
		}
		blocks, err := tx.BlockedAmong(ctx, accounts, phones)
		if err != nil {
			return err
		}
		var (
			sending []string
			paced   []int // indices of messages of paced senders
			seen    = map[string]bool{}
		)
		for i, id := range ids {
			msg := msgs[id]
			if msg == nil || seen[id] {
				if msg == nil {
					m.cfg.Logger.Warn("dispatch of an unknown message", "message_id", id)
				}
				continue // a job run twice at once: the first claim stands for both
			}
			seen[id] = true
			switch msg.Status {
			case store.StatusSending:
				if age := now.Sub(msg.UpdatedAt); age < resubmitAfter {
					out[i].wait = resubmitAfter - age // another dispatch is submitting it: look again later
				} else {
					out[i].msg = msg
				}
				continue
			case store.StatusQueued, store.StatusScheduled:
			default:
				continue
			}
			if !now.Before(m.queuedSince(msg).Add(m.cfg.Expiry)) {
				if err := m.fail(ctx, tx, msg, carriers.FailureExpired, now, nil); err != nil {
					return err
				}
				continue
			}
			if b, ok := blocks[[2]string{msg.AccountID, msg.ToNumber}]; ok && now.Before(b.RetryAfter) {
				if err := m.fail(ctx, tx, msg, b.Reason, now, nil); err != nil {
					return err
				}
				continue
			}
			if m.cfg.Pacing.interval(msg.SenderType) > 0 {
				paced = append(paced, i)
				continue
			}
			msg.Status, msg.UpdatedAt = store.StatusSending, now
			out[i].msg = msg
			sending = append(sending, id)
		}
		if err := tx.MarkSending(ctx, sending, now); err != nil {
			return err
		}
		return m.pace(ctx, tx, ids, msgs, paced, now, out)
	})
	return out, err
}

// pace gives each message of a paced sender without a slot its number's next slot, in the order
// the messages were created; those whose slot has come are claimed for sending, the others wait
// for it (their jobs snooze until then).
func (m *Messages) pace(ctx context.Context, tx *store.Store, ids []string, msgs map[string]*store.Message, paced []int, now time.Time, out []claim) error {
	slices.SortFunc(paced, func(a, b int) int { return strings.Compare(ids[a], ids[b]) })
	fresh := map[string][]*store.Message{} // by sender number
	var senders []string
	for _, i := range paced {
		if msg := msgs[ids[i]]; msg.NotBefore == nil {
			if fresh[msg.PhoneNumberID] == nil {
				senders = append(senders, msg.PhoneNumberID)
			}
			fresh[msg.PhoneNumberID] = append(fresh[msg.PhoneNumberID], msg)
		}
	}
	for _, sender := range senders {
		group := fresh[sender]
		iv := m.cfg.Pacing.interval(group[0].SenderType)
		first, err := tx.ReserveSendSlots(ctx, sender, now, iv, len(group))
		if err != nil {
			return err
		}
		for k, msg := range group {
			slot := first.Add(time.Duration(k) * iv)
			msg.NotBefore = &slot
		}
	}
	for _, i := range paced {
		msg := msgs[ids[i]]
		fields := map[string]any{"updated_at": now, "not_before": *msg.NotBefore, "status": store.StatusQueued}
		if !msg.NotBefore.After(now.Add(slotTolerance)) {
			fields["status"] = store.StatusSending
			out[i].msg = msg
		} else {
			out[i].wait = min(msg.NotBefore.Sub(now), m.queuedSince(msg).Add(m.cfg.Expiry).Sub(now))
		}
		if _, err := tx.UpdateMessage(ctx, msg.ID, []string{msg.Status}, fields); err != nil {
			return err
		}
		msg.Status, msg.UpdatedAt = fields["status"].(string), now
	}
	return nil
}

// recordSent records the submissions of concurrent dispatches, and their message.sent events, in
// one transaction (asynchronous, as claims are).
func (m *Messages) recordSent(ctx context.Context, subs []store.Submitted) ([]struct{}, error) {
	now := m.now()
	err := m.cfg.Store.TxAsync(ctx, func(tx *store.Store) error {
		sent, err := tx.MarkSent(ctx, subs, now)
		if err != nil {
			return err
		}
		return m.messageEvents(ctx, tx, EventMessageSent, sent)
	})
	return make([]struct{}, len(subs)), err
}

// queuedSince is when a message started waiting to be sent.
func (m *Messages) queuedSince(msg *store.Message) time.Time {
	if msg.SendAt != nil && msg.SendAt.After(msg.CreatedAt) {
		return *msg.SendAt
	}
	return msg.CreatedAt
}

// submit fetches a `sending` message's attachments and hands it to its carrier. It returns the
// carrier's id of the message when the carrier accepted it, nil when the message failed for good
// (recorded here), or an error when the submission should be tried again.
func (m *Messages) submit(ctx context.Context, msg *store.Message) (*string, error) {
	out := carriers.Outbound{Reference: msg.ID, From: msg.FromNumber, To: msg.ToNumber, Encoding: msg.Encoding, Segments: msg.Segments}
	if msg.Body != nil {
		out.Body = *msg.Body
	}
	media, err := m.media(ctx, msg)
	var unreachable *errAttachment
	if errors.As(err, &unreachable) {
		m.cfg.Logger.Info("attachment unreachable", "message_id", msg.ID, "err", err)
		return nil, m.failSending(ctx, msg, carriers.FailureAttachmentUnreachable)
	}
	if err != nil {
		return nil, err
	}
	out.Media = media
	messenger, err := m.cfg.Carriers.Messenger(msg.Carrier)
	if err != nil {
		m.cfg.Logger.Error("no messaging carrier for a message", "message_id", msg.ID, "carrier", msg.Carrier, "err", err)
		return nil, m.failSending(ctx, msg, carriers.FailureUnknown)
	}
	start := time.Now()
	sctx, span := tracer().Start(ctx, "carrier.submit", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("switchboard.carrier", msg.Carrier), attribute.String("switchboard.message_id", msg.ID)))
	sub, err := messenger.Submit(sctx, out)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
	var refused *carriers.SubmitError
	switch {
	case errors.As(err, &refused) && refused.Permanent:
		m.metrics.observeSubmit(msg.Carrier, time.Since(start), submitRefused)
		m.cfg.Logger.Info("the carrier refused a message", "message_id", msg.ID, "carrier", msg.Carrier, "reason", refused.Reason)
		return nil, m.failSending(ctx, msg, refused.Reason)
	case err != nil:
		m.metrics.observeSubmit(msg.Carrier, time.Since(start), submitTemporary)
		m.cfg.Logger.Warn("carrier submission failed; it is tried again", "message_id", msg.ID, "carrier", msg.Carrier, "err", err)
		if !m.now().Before(m.queuedSince(msg).Add(m.cfg.Expiry)) {
			return nil, m.failSending(ctx, msg, carriers.FailureExpired)
		}
		return nil, fmt.Errorf("submit message %s: %w", msg.ID, err)
	}
	m.metrics.observeSubmit(msg.Carrier, time.Since(start), "")
	return &sub.CarrierID, nil
}

// media fetches (once) and stores a message's attachments, and returns them as the carrier gets
// them: signed URLs of the stored copies.
func (m *Messages) media(ctx context.Context, msg *store.Message) ([]carriers.Media, error) {
	if msg.Type != TypeMMS {
		return nil, nil
	}
	atts, err := m.cfg.Store.MessageAttachments(ctx, msg.ID)
	if err != nil || len(atts) == 0 {
		return nil, err
	}
	out := make([]carriers.Media, 0, len(atts))
	for _, a := range atts {
		ct := ""
		if a.ContentType != nil {
			ct = *a.ContentType
		}
		if a.FetchedAt == nil {
			var data []byte
			if ct, data, err = m.fetchAttachment(ctx, a.URL, nil); err != nil {
				return nil, err
			}
			if err := m.cfg.Store.SaveAttachmentFile(ctx, a.ID, AttachmentType(ct), ct, data, m.now()); err != nil {
				return nil, err
			}
		}
		u, err := m.FileURL(ctx, a.ID, CarrierFileURLTTL)
		if err != nil {
			return nil, err
		}
		out = append(out, carriers.Media{URL: u, ContentType: ct})
	}
	return out, nil
}

// failSending fails a message that is `sending`.
func (m *Messages) failSending(ctx context.Context, msg *store.Message, reason string) error {
	return m.cfg.Store.TxAsync(ctx, func(tx *store.Store) error {
		locked, err := tx.LockMessage(ctx, msg.ID)
		if err != nil {
			return err
		}
		if locked.Status != store.StatusSending {
			return nil
		}
		return m.fail(ctx, tx, locked, reason, m.now(), nil)
	})
}

// fail records a message's failure and its message.failed event inside tx. Numbers that failed as
// invalid or unreachable are blocked for the account.
func (m *Messages) fail(ctx context.Context, tx *store.Store, msg *store.Message, reason string, at time.Time, v *store.MessageView) error {
	if !knownFailure[reason] {
		reason = carriers.FailureUnknown
	}
	ok, err := tx.UpdateMessage(ctx, msg.ID, []string{msg.Status},
		map[string]any{"status": store.StatusFailed, "failed_at": at, "failure_reason": reason, "updated_at": at})
	if err != nil || !ok {
		return err
	}
	msg.Status, msg.FailedAt, msg.FailureReason, msg.UpdatedAt = store.StatusFailed, &at, &reason, at
	if reason == carriers.FailureInvalidMobileNumber || reason == carriers.FailureUnreachableCarrier {
		if err := tx.BlockNumber(ctx, store.BlockedNumber{AccountID: msg.AccountID, PhoneNumber: msg.ToNumber,
			Reason: reason, BlockedAt: at, RetryAfter: at.Add(BlockRetryAfter)}); err != nil {
			return err
		}
	}
	return m.messageEvent(ctx, tx, EventMessageFailed, msg, v)
}

var knownFailure = map[string]bool{
	carriers.FailureInvalidMobileNumber: true, carriers.FailureUnreachableCarrier: true, carriers.FailureLandline: true,
	carriers.FailureCarrierFiltered: true, carriers.FailureOptedOutAtCarrier: true, carriers.FailureExpired: true,
	carriers.FailureAttachmentUnreachable: true, carriers.FailureUnknown: true,
}

// receiptItem is one delivery receipt of one carrier.
type receiptItem struct {
	carrier string
	rc      *carriers.Receipt
}

// applyReceipt records a carrier's delivery receipt; concurrent receipts share one transaction.
// A receipt for a message that already has its outcome (carriers repeat them) changes nothing.
func (m *Messages) applyReceipt(ctx context.Context, carrier string, rc *carriers.Receipt) error {
	_, err := m.receipts.Do(ctx, receiptItem{carrier: carrier, rc: rc})
	return err
}

// applyReceipts records receipts, their message.delivered and message.failed events and the
// blocks they set or lift, in one transaction.
func (m *Messages) applyReceipts(ctx context.Context, items []receiptItem) ([]struct{}, error) {
	outs := make([]store.Outcome, len(items))
	for i, it := range items {
		o := store.Outcome{ID: it.rc.Reference, Status: store.StatusDelivered, At: it.rc.At.UTC().Truncate(time.Microsecond), CarrierID: it.rc.CarrierID}
		if it.rc.At.IsZero() {
			o.At = m.now()
		}
		if it.rc.Status == carriers.ReceiptFailed {
			o.Status, o.Reason = store.StatusFailed, it.rc.FailureReason
			if !knownFailure[o.Reason] {
				o.Reason = carriers.FailureUnknown
			}
		}
		outs[i] = o
	}
	err := m.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		msgs, err := tx.FinishOutbound(ctx, outs)
		if err != nil {
			return err
		}
		// A message the receipt found still `sending` announces message.sent first (its
		// submission's record came too late to), then its outcome: every message that reached
		// the carrier is announced sent before it is announced delivered or failed.
		var sent, delivered, failed []store.Message
		var phones, accounts []string
		for i, msg := range msgs {
			if msg == nil {
				m.cfg.Logger.Debug("receipt for no message waiting for one", "carrier", items[i].carrier, "reference", outs[i].ID)
				continue
			}
			if msg.WasSending {
				sent = append(sent, sentStep(msg.Message))
			}
			if msg.Status == store.StatusDelivered {
				delivered = append(delivered, msg.Message)
				phones, accounts = append(phones, msg.ToNumber), append(accounts, msg.AccountID)
				continue
			}
			failed = append(failed, msg.Message)
			if r := *msg.FailureReason; r == carriers.FailureInvalidMobileNumber || r == carriers.FailureUnreachableCarrier {
				if err := tx.BlockNumber(ctx, store.BlockedNumber{AccountID: msg.AccountID, PhoneNumber: msg.ToNumber,
					Reason: r, BlockedAt: *msg.FailedAt, RetryAfter: msg.FailedAt.Add(BlockRetryAfter)}); err != nil {
					return err
				}
			}
		}
		// A delivery lifts the account's block on the number (decisions §5).
		blocks, err := tx.BlockedAmong(ctx, accounts, phones)
		if err != nil {
			return err
		}
		for _, msg := range delivered {
			if _, ok := blocks[[2]string{msg.AccountID, msg.ToNumber}]; ok {
				if err := tx.UnblockNumber(ctx, msg.AccountID, msg.ToNumber); err != nil {
					return err
				}
			}
		}
		// One insert, in this order: each message's message.sent gets an earlier id than its outcome.
		return m.messageEventGroups(ctx, tx, eventGroup{EventMessageSent, sent},
			eventGroup{EventMessageDelivered, delivered}, eventGroup{EventMessageFailed, failed})
	})
	return make([]struct{}, len(items)), err
}

// sentStep is a message as it was once sent, before the outcome that is now recorded with it.
func sentStep(msg store.Message) store.Message {
	msg.Status, msg.DeliveredAt, msg.FailedAt, msg.FailureReason = store.StatusSent, nil, nil, nil
	return msg
}
