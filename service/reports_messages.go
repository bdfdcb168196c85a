package service

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// receipt applies a delivery receipt.
func (r *Reports) receipt(ctx context.Context, carrier string, rc *carriers.Receipt) error {
	if r.messages == nil {
		return ErrNotImplemented
	}
	return r.messages.applyReceipt(ctx, carrier, rc)
}

// inbound stores a message a handset sent.
func (r *Reports) inbound(ctx context.Context, carrier string, m *carriers.InboundMessage) error {
	if r.messages == nil {
		return ErrNotImplemented
	}
	return r.messages.receive(ctx, carrier, m)
}

// Keywords a handset sends (decisions §5): the whole message, in any letter case.
var (
	optOutKeywords = map[string]bool{"STOP": true, "STOPALL": true, "UNSUBSCRIBE": true, "CANCEL": true, "END": true, "QUIT": true}
	optInKeywords  = map[string]bool{"START": true, "UNSTOP": true, "YES": true}
	helpKeywords   = map[string]bool{"HELP": true, "INFO": true}
)

// Keyword classes.
const (
	keywordNone = iota
	keywordOptOut
	keywordOptIn
	keywordHelp
)

// classifyKeyword says which keyword a whole message body is, if any.
func classifyKeyword(body string) int {
	k := strings.ToUpper(strings.TrimSpace(body))
	switch {
	case optOutKeywords[k]:
		return keywordOptOut
	case optInKeywords[k]:
		return keywordOptIn
	case helpKeywords[k]:
		return keywordHelp
	}
	return keywordNone
}

// Confirmation replies; %s is the account's brand name.
const (
	replyOptOut = "%s: You are unsubscribed and will receive no more messages. Reply START to resubscribe."
	replyOptIn  = "%s: You are subscribed again. Reply HELP for help, STOP to unsubscribe."
	replyHelp   = "%s: Reply STOP to unsubscribe, START to resubscribe. Msg & data rates may apply."
)

// receive stores an inbound message as `received` in its pair's conversation (creating the
// contact and conversation when new), emits message.received (for an MMS once its files are
// fetched; see inboundMediaWorker), and acts on opt-out, opt-in and help keywords with a
// confirmation reply that is a real outbound message. A repeated CarrierID
// is ignored. A message to a number nobody holds is logged and dropped.
func (m *Messages) receive(ctx context.Context, carrier string, in *carriers.InboundMessage) error {
	log := m.cfg.Logger.With("carrier", carrier, "carrier_id", in.CarrierID)
	from, err := NormalizeE164(in.From)
	if err != nil {
		log.Warn("inbound message from an invalid number: dropped", "from", in.From)
		return nil
	}
	to, err := normalizeAddress(in.To)
	if err != nil {
		log.Warn("inbound message to an invalid number: dropped", "to", in.To)
		return nil
	}
	num, err := m.cfg.Store.HeldNumber(ctx, to)
	if errors.Is(err, store.ErrNotFound) {
		log.Warn("inbound message to a number nobody holds: dropped", "to", to)
		return nil
	}
	if err != nil {
		return err
	}
	projectID, accountID := num.ProjectID, ""
	if num.AccountID != nil {
		accountID = *num.AccountID
	}
	if num.Type == store.NumberDemo {
		// The shared demo number: the message belongs to the account that last wrote to the handset.
		last, err := m.cfg.Store.DemoCorrespondent(ctx, num.ID, from)
		if errors.Is(err, store.ErrNotFound) {
			log.Info("inbound message to the demo number from a handset it never wrote to: dropped", "from", from)
			return nil
		}
		if err != nil {
			return err
		}
		projectID, accountID = last.ProjectID, last.AccountID
	}
	if accountID == "" {
		log.Warn("inbound message to a number of no account: dropped", "to", to)
		return nil
	}
	// PostgreSQL text holds neither NUL nor invalid UTF-8 (a carrier's form or PDU may carry
	// either): each NUL, and each run of invalid bytes, becomes the replacement character. A
	// handset's message is kept, not refused as an API request would be.
	in.Body = strings.ToValidUTF8(strings.ReplaceAll(in.Body, "\x00", "\uFFFD"), "\uFFFD")
	at := in.At.UTC().Truncate(time.Microsecond)
	if in.At.IsZero() {
		at = m.now()
	}
	if in.CarrierID == "" {
		in.CarrierID = store.NewID("in")
	}
	err = m.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		if seen, err := tx.InboundSeen(ctx, carrier, in.CarrierID); err != nil || seen {
			return err
		}
		acct, err := tx.GetAccount(ctx, projectID, accountID)
		if err != nil {
			return err
		}
		pair, err := tx.ResolvePair(ctx, store.Contact{ProjectID: projectID, AccountID: accountID, PhoneNumber: from}, num.ID, at, nil)
		if err != nil {
			return err
		}
		if pair.ConversationCreated {
			if err := conversationEvent(ctx, tx, pair.Conversation, pair.Contact, num); err != nil {
				return err
			}
		}
		seg := Segment(in.Body)
		var body *string
		if in.Body != "" {
			body = &in.Body
		}
		msg := &store.Message{
			ID: store.NewID(store.PrefixMessage), ProjectID: projectID, AccountID: accountID, ConversationID: pair.Conversation.ID,
			PhoneNumberID: num.ID, SenderType: num.Type, ContactID: pair.Contact.ID, Direction: store.DirectionInbound,
			Status: store.StatusReceived, Body: body, Metadata: store.Metadata{}, Encoding: seg.Encoding, Segments: seg.Segments,
			Type: MessageType(seg, len(in.Media)), FromNumber: from, ToNumber: num.Number, Carrier: carrier,
			CarrierID: &in.CarrierID, CreatedAt: at, UpdatedAt: at, ReceivedAt: &at,
		}
		atts := make([]store.Attachment, len(in.Media))
		for i, md := range in.Media {
			atts[i] = store.Attachment{ID: store.NewID(store.PrefixAttachment), ProjectID: projectID, MessageID: msg.ID,
				Position: i, URL: md.URL, Type: AttachmentType(md.ContentType)}
		}
		if err := tx.InsertMessage(ctx, msg, atts); err != nil {
			return err
		}
		if len(atts) > 0 {
			// message.received waits for the files: a job fetches them from the carrier first.
			if err := tx.InsertJob(ctx, inboundMediaArgs{MessageID: msg.ID, Carrier: carrier}, m.inboundMediaOpts()); err != nil {
				return err
			}
		} else {
			v := &store.MessageView{Message: *msg, Contact: *pair.Contact, PhoneNumber: *num, Attachments: atts}
			if err := m.messageEvent(ctx, tx, webhooks.EventMessageReceived, msg, v); err != nil {
				return err
			}
		}
		// The handset evidently works: lift a block left by an earlier hard failure.
		if err := tx.UnblockNumber(ctx, accountID, from); err != nil {
			return err
		}
		return m.keyword(ctx, tx, acct, pair, num, in.Body, at)
	})
	if errors.Is(err, store.ErrDuplicate) {
		return nil // the same inbound message, stored concurrently
	}
	return err
}

// keyword acts on an opt-out, opt-in or help keyword. START and UNSTOP always opt in; YES only
// when the contact has opted out (otherwise it is an ordinary answer, such as to "Can you make it
// on Tuesday?"). Events are emitted when the state changes; every keyword gets its reply.
func (m *Messages) keyword(ctx context.Context, tx *store.Store, acct *store.Account, pair *store.Pair, num *store.PhoneNumber, body string, at time.Time) error {
	kind := classifyKeyword(body)
	if kind == keywordOptIn && strings.EqualFold(strings.TrimSpace(body), "YES") && !pair.Contact.OptedOut {
		kind = keywordNone
	}
	c := pair.Contact
	var reply, event string
	switch kind {
	case keywordNone:
		return nil
	case keywordOptOut:
		reply = replyOptOut
		if !c.OptedOut {
			event = webhooks.EventContactOptedOut
		}
	case keywordOptIn:
		reply = replyOptIn
		if c.OptedOut {
			event = webhooks.EventContactOptedIn
		}
	case keywordHelp:
		reply = replyHelp
	}
	if event != "" {
		optedOut := kind == keywordOptOut
		if err := tx.SetContactOptedOut(ctx, c.ID, optedOut, at); err != nil {
			return err
		}
		c.OptedOut, c.UpdatedAt = optedOut, at
		if err := contactEvent(ctx, tx, event, c); err != nil {
			return err
		}
	}
	brand := acct.Name
	if acct.BrandName != nil && *acct.BrandName != "" {
		brand = *acct.BrandName
	}
	text := strings.Replace(reply, "%s", brand, 1)
	seg := Segment(text)
	msg := &store.Message{
		ID: store.NewID(store.PrefixMessage), ProjectID: c.ProjectID, AccountID: c.AccountID, ConversationID: pair.Conversation.ID,
		PhoneNumberID: num.ID, SenderType: num.Type, ContactID: c.ID, Direction: store.DirectionOutbound, Status: store.StatusQueued,
		Body: &text, Metadata: store.Metadata{}, Encoding: seg.Encoding, Segments: seg.Segments, Type: MessageType(seg, 0),
		FromNumber: num.Number, ToNumber: c.PhoneNumber, Carrier: num.Carrier, AutoReply: true, CreatedAt: at, UpdatedAt: at,
	}
	return tx.InsertMessage(ctx, msg, nil)
}
