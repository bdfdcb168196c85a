package service

import (
	"context"
	"time"

	"github.com/switchboard/switchboard/store"
)

// Event types of the messaging core.
const (
	EventMessageSent         = "message.sent"
	EventMessageDelivered    = "message.delivered"
	EventMessageFailed       = "message.failed"
	EventMessageReceived     = "message.received"
	EventConversationCreated = "conversation.created"
	EventContactOptedOut     = "contact.opted_out"
	EventContactOptedIn      = "contact.opted_in"
)

// The event payloads below are the JSON shapes of openapi.yaml's MessageEventData,
// ConversationCreatedEventData and ContactEventData; the service builds them without the
// generated types, which only the server imports. Fields that Surge's types make optional but
// not nullable (a contact's email and names, a message's blast_id) are left out when unset.

type eventContact struct {
	ID               string         `json:"id"`
	PhoneNumber      string         `json:"phone_number"`
	Email            *string        `json:"email,omitempty"`
	FirstName        *string        `json:"first_name,omitempty"`
	LastName         *string        `json:"last_name,omitempty"`
	Metadata         store.Metadata `json:"metadata"`
	OutboundDisabled bool           `json:"outbound_disabled"`
	OptedOut         bool           `json:"opted_out"`
	CreatedAt        time.Time      `json:"created_at"`
}

type eventPhoneNumber struct {
	ID       string         `json:"id"`
	Metadata store.Metadata `json:"metadata"`
	Name     *string        `json:"name"`
	Number   string         `json:"number"`
	Type     string         `json:"type"`
}

type eventConversation struct {
	ID          string           `json:"id"`
	Contact     eventContact     `json:"contact"`
	PhoneNumber eventPhoneNumber `json:"phone_number"`
}

type eventAttachment struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	URL    string `json:"url"`
	Status string `json:"status"`
}

type messageEventData struct {
	ID            string            `json:"id"`
	Status        string            `json:"status"`
	Direction     string            `json:"direction"`
	Body          *string           `json:"body"`
	Attachments   []eventAttachment `json:"attachments"`
	BlastID       *string           `json:"blast_id,omitempty"`
	Conversation  eventConversation `json:"conversation"`
	Metadata      store.Metadata    `json:"metadata"`
	Encoding      string            `json:"encoding"`
	Segments      int               `json:"segments"`
	Type          string            `json:"type"`
	CreatedAt     time.Time         `json:"created_at"`
	SendAt        *time.Time        `json:"send_at,omitempty"`
	SentAt        *time.Time        `json:"sent_at,omitempty"`
	DeliveredAt   *time.Time        `json:"delivered_at,omitempty"`
	FailedAt      *time.Time        `json:"failed_at,omitempty"`
	ReceivedAt    *time.Time        `json:"received_at,omitempty"`
	FailureReason *string           `json:"failure_reason,omitempty"`
}

type contactEventData struct {
	ID          string         `json:"id"`
	PhoneNumber string         `json:"phone_number"`
	Email       *string        `json:"email,omitempty"`
	FirstName   *string        `json:"first_name,omitempty"`
	LastName    *string        `json:"last_name,omitempty"`
	Metadata    store.Metadata `json:"metadata"`
}

func contactOf(c *store.Contact) eventContact {
	return eventContact{ID: c.ID, PhoneNumber: c.PhoneNumber, Email: c.Email, FirstName: c.FirstName, LastName: c.LastName,
		Metadata: orEmpty(c.Metadata), OutboundDisabled: c.OutboundDisabled, OptedOut: c.OptedOut, CreatedAt: c.CreatedAt}
}

func numberOf(n *store.PhoneNumber) eventPhoneNumber {
	return eventPhoneNumber{ID: n.ID, Metadata: orEmpty(n.Metadata), Name: n.Name, Number: n.Number, Type: n.Type}
}

func orEmpty(m store.Metadata) store.Metadata {
	if m == nil {
		return store.Metadata{}
	}
	return m
}

// messageData is a message as message.* events carry it.
func (m *Messages) messageData(v *store.MessageView) messageEventData {
	atts := make([]eventAttachment, 0, len(v.Attachments))
	for _, a := range v.Attachments {
		atts = append(atts, eventAttachment{ID: a.ID, Type: a.Type, URL: m.AttachmentURL(a.ID), Status: AttachmentStatus(&a)})
	}
	msg := &v.Message
	return messageEventData{
		ID: msg.ID, Status: msg.Status, Direction: msg.Direction, Body: msg.Body, Attachments: atts, BlastID: msg.BlastID,
		Conversation: eventConversation{ID: msg.ConversationID, Contact: contactOf(&v.Contact), PhoneNumber: numberOf(&v.PhoneNumber)},
		Metadata:     orEmpty(msg.Metadata), Encoding: msg.Encoding, Segments: msg.Segments, Type: msg.Type,
		CreatedAt: msg.CreatedAt, SendAt: msg.SendAt, SentAt: msg.SentAt, DeliveredAt: msg.DeliveredAt,
		FailedAt: msg.FailedAt, ReceivedAt: msg.ReceivedAt, FailureReason: msg.FailureReason,
	}
}

// messageEvent records a message.* event for the message as it now is, inside tx. The message's
// contact and number are read in tx unless the caller passes them in v.
func (m *Messages) messageEvent(ctx context.Context, tx *store.Store, typ string, msg *store.Message, v *store.MessageView) error {
	if v == nil {
		return m.messageEvents(ctx, tx, typ, []store.Message{*msg})
	}
	v.Message = *msg
	e, err := store.NewEvent(msg.ProjectID, msg.AccountID, typ, m.messageData(v))
	if err != nil {
		return err
	}
	e.Traceparent = msg.Traceparent
	return tx.InsertEvents(ctx, []store.Event{e})
}

// messageEvents records an event of type typ for each message as it now is, inside tx.
func (m *Messages) messageEvents(ctx context.Context, tx *store.Store, typ string, msgs []store.Message) error {
	return m.messageEventGroups(ctx, tx, eventGroup{typ, msgs})
}

// eventGroup is messages that each get an event of one type.
type eventGroup struct {
	typ  string
	msgs []store.Message
}

// messageEventGroups records the events of several groups inside tx, with one read of the messages'
// contacts and numbers and one insert, in the groups' order (which is their ids' order).
func (m *Messages) messageEventGroups(ctx context.Context, tx *store.Store, groups ...eventGroup) error {
	var msgs []store.Message
	for _, g := range groups {
		msgs = append(msgs, g.msgs...)
	}
	if len(msgs) == 0 {
		return nil
	}
	views, err := tx.MessageViews(ctx, msgs)
	if err != nil {
		return err
	}
	evs := make([]store.Event, 0, len(views))
	for _, g := range groups {
		for range g.msgs {
			v := &views[len(evs)]
			ev, err := store.NewEvent(v.ProjectID, v.AccountID, g.typ, m.messageData(v))
			if err != nil {
				return err
			}
			ev.Traceparent = v.Message.Traceparent // the trace of the request that sent it
			evs = append(evs, ev)
		}
	}
	return tx.InsertEvents(ctx, evs)
}

// conversationEvent records conversation.created.
func conversationEvent(ctx context.Context, tx *store.Store, cv *store.Conversation, c *store.Contact, n *store.PhoneNumber) error {
	_, err := tx.InsertEvent(ctx, cv.ProjectID, cv.AccountID, EventConversationCreated, conversationCreatedData(cv, c, n))
	return err
}

// conversationCreatedData is the data of conversation.created.
func conversationCreatedData(cv *store.Conversation, c *store.Contact, n *store.PhoneNumber) any {
	return struct {
		ID          string           `json:"id"`
		PhoneNumber eventPhoneNumber `json:"phone_number"`
		Contact     eventContact     `json:"contact"`
	}{cv.ID, numberOf(n), contactOf(c)}
}

// contactEvent records contact.opted_out or contact.opted_in.
func contactEvent(ctx context.Context, tx *store.Store, typ string, c *store.Contact) error {
	_, err := tx.InsertEvent(ctx, c.ProjectID, c.AccountID, typ, contactEventData{
		ID: c.ID, PhoneNumber: c.PhoneNumber, Email: c.Email, FirstName: c.FirstName, LastName: c.LastName, Metadata: orEmpty(c.Metadata),
	})
	return err
}
