package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// Blast rules and sizes.
const (
	// BlastBatch is how many recipients one fan-out job handles, in one transaction.
	BlastBatch = 1000
	// MaxBlastTargets is the most entries (numbers, contact and audience ids) a blast request may
	// list; audiences carry larger sends.
	MaxBlastTargets = 250_000
	// BlastsQueue is the job queue of blast expansion and fan-out, apart from message dispatch so
	// that a large fan-out never delays other accounts' messages.
	BlastsQueue = "blasts"
)

// Reasons a blast recipient got no message.
const (
	SkipOptedOut         = "opted_out"
	SkipOutboundDisabled = "outbound_disabled"
	SkipBlocked          = "blocked"
	SkipNoSender         = "sender_released"
)

// Blasts sends one message to many recipients on top of the messaging core: a blast is stored
// with its `to` list as given (so a request of 100,000 numbers is accepted at once); at send_at
// a job expands its audiences, de-duplicates the recipients by phone number and fans them out in
// batch jobs of BlastBatch, each of which writes its messages into the outbound queue (the core's
// dispatch, pacing and receipts) in one transaction. A recipient is recorded once per blast
// (unique blast and phone number), so a batch run again after a crash neither skips nor repeats
// anyone. Blast messages carry blast_id and are not part of their conversation's thread.
type Blasts struct {
	m   *Messages
	log *slog.Logger
}

// NewBlasts returns the Blasts service over the messaging core.
func NewBlasts(m *Messages) (*Blasts, error) {
	if m == nil {
		return nil, errors.New("service: NewBlasts needs Messages")
	}
	return &Blasts{m: m, log: m.cfg.Logger}, nil
}

// Register adds the blast jobs' workers.
func (b *Blasts) Register(w *river.Workers) {
	river.AddWorker(w, &blastExpandWorker{b: b})
	river.AddWorker(w, &blastBatchWorker{b: b})
}

// BlastParams is a blast request. To holds E.164 numbers, ctc_ and aud_ ids; Contacts and
// Segments are the deprecated fields (contact ids; audience ids).
type BlastParams struct {
	ProjectID, AccountID string
	Demo                 bool
	From, Body, Name     *string
	Attachments          []string
	SendAt               *time.Time
	LinkShortening       bool
	To                   []string
	Contacts             []string
	Segments             []string
}

// BlastView is a blast with its progress, as the API shows it.
type BlastView struct {
	store.Blast
	store.BlastProgress
	// Status is the shown status: a sending blast whose recipients were all handled and of which
	// no message waits any more is sent.
	Status string
}

// Create validates a blast and stores it with its expansion job (at send_at, or now). Contacts
// and audiences must be the account's (otherwise 422, and nothing is stored or sent).
func (b *Blasts) Create(ctx context.Context, p BlastParams) (*BlastView, error) {
	now := b.m.now()
	if p.Demo {
		return nil, Errorf(TypeDemoAPIKey, "demo API keys cannot send blasts; use a live key")
	}
	if err := validateBlastContent(p, now); err != nil {
		return nil, err
	}
	targets, contacts, audiences, err := b.classify(p)
	if err != nil {
		return nil, err
	}
	st := b.m.cfg.Store
	for _, ref := range []struct{ table, field string }{{"contacts", "to"}, {"audiences", "to"}} {
		ids := contacts
		if ref.table == "audiences" {
			ids = audiences
		}
		foreign, err := st.ForeignIDs(ctx, ref.table, p.ProjectID, p.AccountID, ids)
		if err != nil {
			return nil, err
		}
		if len(foreign) > 0 {
			if len(foreign) > 5 {
				foreign = append(foreign[:5], fmt.Sprintf("and %d more", len(foreign)-5))
			}
			return nil, Invalid(ref.field, "names "+ref.table+" that are not the account's: "+strings.Join(foreign, ", "))
		}
	}
	sendAt := now
	if p.SendAt != nil && p.SendAt.After(now) {
		sendAt = p.SendAt.UTC().Truncate(time.Microsecond)
	}
	from := ""
	if p.From != nil {
		from = *p.From
	}
	blast := &store.Blast{ID: store.NewID(store.PrefixBlast), ProjectID: p.ProjectID, AccountID: p.AccountID, Name: p.Name,
		Body: p.Body, Attachments: store.StringList(p.Attachments), LinkShortening: p.LinkShortening, Targets: targets,
		Status: store.BlastScheduled, SendAt: sendAt, CreatedAt: now, UpdatedAt: now}
	if blast.Body != nil && *blast.Body == "" {
		blast.Body = nil
	}
	err = st.Tx(ctx, func(tx *store.Store) error {
		sc, err := tx.LoadSendContext(ctx, p.ProjectID, p.AccountID, from, "")
		if err != nil {
			return err
		}
		if sc.Archived {
			return Errorf(TypeAccountArchived, "the account is archived and cannot send messages")
		}
		sender, err := b.m.sender(ctx, tx, SendParams{ProjectID: p.ProjectID, AccountID: p.AccountID}, from, sc.Sender)
		if err != nil {
			return err
		}
		blast.PhoneNumberID = sender.ID
		if err := tx.InsertBlast(ctx, blast); err != nil {
			return err
		}
		opts := &river.InsertOpts{Queue: BlastsQueue}
		if sendAt.After(now) {
			// Only a future send_at: a scheduled job waits for River's scheduler to make it
			// available, an immediate one is taken at once.
			opts.ScheduledAt = sendAt
		}
		return tx.InsertJob(ctx, blastExpandArgs{BlastID: blast.ID, ProjectID: p.ProjectID}, opts)
	})
	if err != nil {
		return nil, err
	}
	blast.Targets = nil
	return b.view(*blast, store.BlastProgress{}), nil
}

// validateBlastContent checks what every message of the blast will carry, as a send does.
func validateBlastContent(p BlastParams, now time.Time) error {
	hasBody := p.Body != nil && *p.Body != ""
	switch {
	case hasNUL(p.Body, p.Name):
		return Invalid("body", "must not contain NUL characters (\\u0000)")
	case !hasBody && len(p.Attachments) == 0:
		return Invalid("body", "is required when there are no attachments")
	case len(p.Attachments) > MaxAttachments:
		return Invalid("attachments", fmt.Sprintf("must have at most %d items", MaxAttachments))
	case hasBody && utf8.RuneCountInString(*p.Body) > MaxBodyLength:
		return Errorf(TypeMessageTooLong, "the body is longer than %d characters", MaxBodyLength)
	case p.SendAt != nil && p.SendAt.After(now.Add(MaxScheduleAhead)):
		return Invalid("send_at", "must be at most 60 days ahead")
	case len(p.To)+len(p.Contacts)+len(p.Segments) == 0:
		return Invalid("to", "must name at least one recipient")
	case len(p.To)+len(p.Contacts)+len(p.Segments) > MaxBlastTargets:
		return Invalid("to", fmt.Sprintf("must have at most %d entries; put larger sends in audiences", MaxBlastTargets))
	}
	return nil
}

// classify normalizes the recipients into the stored `to` list (numbers, then contact ids, then
// audience ids, each once) and returns the contact and audience ids apart.
func (b *Blasts) classify(p BlastParams) (targets store.StringList, contacts, audiences []string, err error) {
	seen := make(map[string]bool, len(p.To)+len(p.Contacts)+len(p.Segments))
	var numbers []string
	add := func(list *[]string, v string) {
		if !seen[v] {
			seen[v] = true
			*list = append(*list, v)
		}
	}
	for _, t := range p.To {
		switch {
		case strings.HasPrefix(t, store.PrefixContact+"_"):
			add(&contacts, t)
		case strings.HasPrefix(t, store.PrefixAudience+"_"):
			add(&audiences, t)
		case isNANP(t):
			add(&numbers, t) // already canonical: spares 100,000 full parses in one request
		default:
			n, err := NormalizeE164(t)
			if err != nil {
				return nil, nil, nil, Invalid("to", "has an entry that is not an E.164 number, a ctc_ id or an aud_ id: "+t)
			}
			add(&numbers, n)
		}
	}
	for _, c := range p.Contacts {
		add(&contacts, c)
	}
	for _, s := range p.Segments {
		if !strings.HasPrefix(s, store.PrefixAudience+"_") {
			return nil, nil, nil, Invalid("segments", "entries must be audience ids (aud_...): "+s)
		}
		add(&audiences, s)
	}
	targets = make(store.StringList, 0, len(numbers)+len(contacts)+len(audiences))
	targets = append(append(append(targets, numbers...), contacts...), audiences...)
	return targets, contacts, audiences, nil
}

// isNANP reports whether s is +1 and ten digits, which NormalizeE164 leaves as it is (every such
// number is a possible North American number and its own E.164 form).
func isNANP(s string) bool {
	if len(s) != 12 || s[0] != '+' || s[1] != '1' {
		return false
	}
	for i := 2; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Get returns a project's blast with its progress.
func (b *Blasts) Get(ctx context.Context, projectID, id string) (*BlastView, error) {
	bl, err := b.m.cfg.Store.GetBlast(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	prog, err := b.m.cfg.Store.BlastProgressOf(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	return b.view(*bl, prog[id]), nil
}

// List returns a page of an account's blasts with their progress.
func (b *Blasts) List(ctx context.Context, projectID, accountID string, p store.Page) ([]BlastView, store.Cursors, error) {
	rows, cur, err := b.m.cfg.Store.ListBlasts(ctx, projectID, accountID, p)
	if err != nil {
		return nil, cur, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	prog, err := b.m.cfg.Store.BlastProgressOf(ctx, ids)
	if err != nil {
		return nil, cur, err
	}
	out := make([]BlastView, len(rows))
	for i, r := range rows {
		out[i] = *b.view(r, prog[r.ID])
	}
	return out, cur, nil
}

// Cancel cancels a scheduled blast, or the messages of a sending blast that are not sent yet; a
// blast already sent or canceled is a conflict.
func (b *Blasts) Cancel(ctx context.Context, projectID, id string) (*BlastView, error) {
	err := b.m.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		bl, err := tx.GetBlast(ctx, projectID, id)
		if err != nil {
			return err
		}
		prog, err := tx.BlastProgressOf(ctx, []string{id})
		if err != nil {
			return err
		}
		if b.view(*bl, prog[id]).Status == store.BlastSent {
			return Errorf(TypeConflict, "the blast is sent already")
		}
		ok, err := tx.CancelBlast(ctx, projectID, id, b.m.now())
		if err != nil {
			return err
		}
		if !ok {
			return Errorf(TypeConflict, "only a scheduled or sending blast can be canceled")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b.Get(ctx, projectID, id)
}

func (b *Blasts) view(bl store.Blast, p store.BlastProgress) *BlastView {
	v := &BlastView{Blast: bl, BlastProgress: p, Status: bl.Status}
	switch {
	case bl.Status == store.BlastScheduled && !bl.SendAt.After(b.m.now()):
		v.Status = store.BlastSending // due: its expansion job is starting it
	case bl.Status == store.BlastSending && bl.FannedOut >= bl.Recipients && p.Queued == 0:
		v.Status = store.BlastSent
	}
	return v
}

// blastExpandArgs is the job that starts a blast at its send_at.
type blastExpandArgs struct {
	BlastID   string `json:"blast_id"`
	ProjectID string `json:"project_id"`
}

// Kind names the job.
func (blastExpandArgs) Kind() string { return "blast_expand" }

type blastExpandWorker struct {
	river.WorkerDefaults[blastExpandArgs]
	b *Blasts
}

func (w *blastExpandWorker) Work(ctx context.Context, j *river.Job[blastExpandArgs]) error {
	return w.b.expand(ctx, j.Args.ProjectID, j.Args.BlastID)
}

// expand resolves a scheduled blast's recipients as they are now (contacts' numbers, audiences'
// members), de-duplicated by phone number, and enqueues their fan-out batches in the transaction
// that marks the blast sending: it runs once, however often its job does.
func (b *Blasts) expand(ctx context.Context, projectID, id string) error {
	return b.m.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		bl, err := tx.GetBlast(ctx, projectID, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil || bl.Status != store.BlastScheduled {
			return err
		}
		targets, err := tx.BlastTargets(ctx, id)
		if err != nil {
			return err
		}
		var phones, contacts, audiences []string
		for _, t := range targets {
			switch {
			case strings.HasPrefix(t, store.PrefixContact+"_"):
				contacts = append(contacts, t)
			case strings.HasPrefix(t, store.PrefixAudience+"_"):
				audiences = append(audiences, t)
			default:
				phones = append(phones, t)
			}
		}
		fromContacts, err := tx.ContactNumbers(ctx, contacts)
		if err != nil {
			return err
		}
		members, err := tx.AudienceMemberNumbers(ctx, audiences)
		if err != nil {
			return err
		}
		seen := make(map[string]bool, len(phones)+len(fromContacts)+len(members))
		recipients := make([]string, 0, len(seen))
		for _, list := range [][]string{phones, fromContacts, members} {
			for _, p := range list {
				if !seen[p] {
					seen[p] = true
					recipients = append(recipients, p)
				}
			}
		}
		ok, err := tx.StartBlast(ctx, id, len(recipients), b.m.now())
		if err != nil || !ok {
			return err
		}
		jobs := make([]river.InsertManyParams, 0, len(recipients)/BlastBatch+1)
		for start := 0; start < len(recipients); start += BlastBatch {
			part := recipients[start:min(start+BlastBatch, len(recipients))]
			jobs = append(jobs, river.InsertManyParams{Args: blastBatchArgs{BlastID: id, ProjectID: projectID, Numbers: part}})
		}
		return tx.InsertJobs(ctx, jobs)
	})
}

// blastBatchArgs is the job that fans out one batch of a blast's recipients.
type blastBatchArgs struct {
	BlastID   string   `json:"blast_id"`
	ProjectID string   `json:"project_id"`
	Numbers   []string `json:"numbers"`
}

// Kind names the job.
func (blastBatchArgs) Kind() string { return "blast_batch" }

// InsertOpts puts the job on the blasts queue.
func (blastBatchArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: BlastsQueue} }

type blastBatchWorker struct {
	river.WorkerDefaults[blastBatchArgs]
	b *Blasts
}

func (w *blastBatchWorker) Work(ctx context.Context, j *river.Job[blastBatchArgs]) error {
	return w.b.fanOut(ctx, j.Args.ProjectID, j.Args.BlastID, j.Args.Numbers)
}

// errBlastCanceled rolls back a batch whose blast was canceled while it ran.
var errBlastCanceled = errors.New("blast canceled")

// fanOut handles one batch of a blast's recipients in one transaction: the recipients not yet
// recorded get their contact (found or created), and either a skip (opted out, outbound
// disabled, blocked) or a message in the conversation with the sender, queued for dispatch.
func (b *Blasts) fanOut(ctx context.Context, projectID, id string, numbers []string) error {
	st := b.m.cfg.Store
	bl, err := st.GetBlast(ctx, projectID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || bl.Status != store.BlastSending {
		return err
	}
	sender, err := st.GetPhoneNumber(ctx, projectID, bl.PhoneNumberID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	acct, err := st.GetAccount(ctx, projectID, bl.AccountID)
	if err != nil {
		return err
	}
	body := ""
	if bl.Body != nil {
		body = *bl.Body
	}
	seg := Segment(body)
	typ := MessageType(seg, len(bl.Attachments))
	err = st.TxAsync(ctx, func(tx *store.Store) error {
		now := b.m.now()
		claimed, err := tx.ClaimedBlastRecipients(ctx, id, numbers)
		if err != nil {
			return err
		}
		todo := make([]string, 0, len(numbers))
		for _, n := range numbers {
			if !claimed[n] {
				todo = append(todo, n)
			}
		}
		if len(todo) == 0 {
			return nil
		}
		contacts, err := tx.EnsureContacts(ctx, projectID, bl.AccountID, todo, now)
		if err != nil {
			return err
		}
		blocks, err := tx.BlockedAmong(ctx, []string{bl.AccountID}, todo)
		if err != nil {
			return err
		}
		recipients := make([]store.BlastRecipient, 0, len(todo))
		var sendTo []string
		skipped := 0
		for _, n := range todo {
			c := contacts[n]
			reason := ""
			switch blk, isBlocked := blocks[[2]string{bl.AccountID, n}]; {
			case sender == nil:
				reason = SkipNoSender
			case c.OptedOut:
				reason = SkipOptedOut
			case c.OutboundDisabled:
				reason = SkipOutboundDisabled
			case isBlocked && now.Before(blk.RetryAfter):
				reason = SkipBlocked
			}
			r := store.BlastRecipient{BlastID: id, PhoneNumber: n, ContactID: c.ID}
			if reason != "" {
				r.SkipReason = &reason
				skipped++
			} else {
				sendTo = append(sendTo, n)
			}
			recipients = append(recipients, r)
		}
		if len(sendTo) > 0 {
			if err := b.writeMessages(ctx, tx, bl, acct, sender, contacts, sendTo, recipients, seg, typ, now); err != nil {
				return err
			}
		}
		if err := tx.InsertBlastRecipients(ctx, recipients); err != nil {
			return err
		}
		ok, err := tx.CountFannedOut(ctx, id, len(todo), skipped, now)
		if err != nil {
			return err
		}
		if !ok {
			return errBlastCanceled
		}
		return nil
	})
	if errors.Is(err, errBlastCanceled) {
		return nil
	}
	return err
}

// writeMessages writes the messages of a batch's sendable recipients, their conversations when
// new (with conversation.created), into the outbound queue; it fills the recipients' message ids.
func (b *Blasts) writeMessages(ctx context.Context, tx *store.Store, bl *store.Blast, acct *store.Account, sender *store.PhoneNumber,
	contacts map[string]store.Contact, sendTo []string, recipients []store.BlastRecipient, seg Segmentation, typ string, now time.Time) error {
	contactIDs := make([]string, len(sendTo))
	for i, n := range sendTo {
		contactIDs[i] = contacts[n].ID
	}
	convs, created, err := tx.EnsureConversations(ctx, bl.ProjectID, bl.AccountID, sender.ID, contactIDs, now)
	if err != nil {
		return err
	}
	byContact := make(map[string]*store.Contact, len(contacts))
	for _, c := range contacts {
		byContact[c.ID] = &c
	}
	events := make([]store.Event, 0, len(created))
	for i := range created {
		data, err := jsonString(webhooks.ConversationCreated(&created[i], byContact[created[i].ContactID], sender))
		if err != nil {
			return err
		}
		events = append(events, store.Event{ProjectID: bl.ProjectID, AccountID: bl.AccountID, Type: webhooks.EventConversationCreated, Data: data})
	}
	msgs := make([]store.Message, 0, len(sendTo))
	var atts []store.Attachment
	msgOf := make(map[string]string, len(sendTo))
	quiet := quietHoursOf(acct)
	for _, n := range sendTo {
		c := contacts[n]
		m := store.Message{ID: store.NewID(store.PrefixMessage), ProjectID: bl.ProjectID, AccountID: bl.AccountID,
			ConversationID: convs[c.ID].ID, PhoneNumberID: sender.ID, SenderType: sender.Type, ContactID: c.ID,
			Direction: store.DirectionOutbound, Status: store.StatusQueued, Body: bl.Body, Metadata: store.Metadata{},
			Encoding: seg.Encoding, Segments: seg.Segments, Type: typ, FromNumber: sender.Number, ToNumber: n,
			Carrier: sender.Carrier, BlastID: &bl.ID, CreatedAt: now, UpdatedAt: now}
		if bl.LinkShortening && bl.Body != nil && *bl.Body != "" {
			// Each recipient's message gets its own links, so a click names the message it came from.
			short, err := ShortenLinks(ctx, tx, b.m.cfg.PublicURL, LinkOwner{ProjectID: bl.ProjectID, AccountID: bl.AccountID, MessageID: m.ID}, *bl.Body)
			if err != nil {
				return err
			}
			sseg := Segment(short)
			m.Body, m.Encoding, m.Segments, m.Type = &short, sseg.Encoding, sseg.Segments, MessageType(sseg, len(bl.Attachments))
		}
		for i, u := range bl.Attachments {
			atts = append(atts, store.Attachment{ID: store.NewID(store.PrefixAttachment), ProjectID: bl.ProjectID, MessageID: m.ID,
				Position: i, URL: u, Type: guessAttachmentType(u)})
		}
		if quiet != nil { // held outside the account's sending window (quiet.go)
			holdBlastPart(quiet, acct, &m, now)
		}
		msgs = append(msgs, m)
		msgOf[n] = m.ID
	}
	for i := range recipients {
		if id, ok := msgOf[recipients[i].PhoneNumber]; ok {
			recipients[i].MessageID = &id
		}
	}
	if err := tx.InsertMessages(ctx, msgs, atts); err != nil {
		return err
	}
	return webhooks.Publish(ctx, tx, events...)
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("service: encode event data: %w", err)
	}
	return string(b), nil
}
