package webhooks

import (
	"context"
	"time"

	"github.com/switchboard/switchboard/store"
)

// Publish records events and fans them out to webhooks: each event gets a pending delivery, due
// at once, per enabled endpoint of its project subscribed to its type. Call it with tx, the
// transaction of the change the events announce: the events and their deliveries commit (or roll
// back) with the change, so no event is lost to webhooks and none announces what did not happen.
// It is how the services publish events; the store's own statements that record a step together
// with its event (a send batch's conversation.created, message.sent, receipts) publish through
// the same SQL (store/events.go).
func Publish(ctx context.Context, tx *store.Store, evs ...store.Event) error {
	return tx.InsertEvents(ctx, evs)
}

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

// Event types of numbers, campaigns and links.
const (
	EventCampaignApproved            = "campaign.approved"
	EventCampaignDeactivated         = "campaign.deactivated"
	EventPhoneNumberAttachedCampaign = "phone_number.attached_to_campaign"
	// EventLinkFollowed is the event of a visit to a shortened link.
	EventLinkFollowed = "link.followed"
)

// Event types of voice.
const (
	EventCallEnded          = "call.ended"
	EventRecordingCompleted = "recording.completed"
	EventVoicemailReceived  = "voicemail.received"
)

// EventTypes are the event types endpoints can subscribe to (decisions §6).
var EventTypes = []string{
	EventMessageSent, EventMessageDelivered, EventMessageFailed, EventMessageReceived,
	EventConversationCreated, EventContactOptedIn, EventContactOptedOut,
	EventCampaignApproved, EventCampaignDeactivated, EventPhoneNumberAttachedCampaign, EventLinkFollowed,
	EventVoicemailReceived, EventCallEnded, EventRecordingCompleted,
}

// The event payloads below are the JSON shapes of openapi.yaml's event data schemas; they are
// built without the generated types, which only the server imports. Fields that Surge's types
// make optional but not nullable (a contact's email and names, a message's blast_id) are left out
// when unset.

// Contact is a contact as events carry it (openapi.yaml's Contact).
type Contact struct {
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

// PhoneNumber is a number as conversations in events show it.
type PhoneNumber struct {
	ID       string         `json:"id"`
	Metadata store.Metadata `json:"metadata"`
	Name     *string        `json:"name"`
	Number   string         `json:"number"`
	Type     string         `json:"type"`
}

// Conversation is a message's conversation as message events carry it.
type Conversation struct {
	ID          string      `json:"id"`
	Contact     Contact     `json:"contact"`
	PhoneNumber PhoneNumber `json:"phone_number"`
}

// Attachment is a message's attachment as message events carry it.
type Attachment struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	URL    string `json:"url"`
	Status string `json:"status"`
}

// MessageData is openapi.yaml's MessageEventData: the data of message.* events.
type MessageData struct {
	ID            string         `json:"id"`
	Status        string         `json:"status"`
	Direction     string         `json:"direction"`
	Body          *string        `json:"body"`
	Attachments   []Attachment   `json:"attachments"`
	BlastID       *string        `json:"blast_id,omitempty"`
	Conversation  Conversation   `json:"conversation"`
	Metadata      store.Metadata `json:"metadata"`
	Encoding      string         `json:"encoding"`
	Segments      int            `json:"segments"`
	Type          string         `json:"type"`
	CreatedAt     time.Time      `json:"created_at"`
	SendAt        *time.Time     `json:"send_at,omitempty"`
	SentAt        *time.Time     `json:"sent_at,omitempty"`
	DeliveredAt   *time.Time     `json:"delivered_at,omitempty"`
	FailedAt      *time.Time     `json:"failed_at,omitempty"`
	ReceivedAt    *time.Time     `json:"received_at,omitempty"`
	FailureReason *string        `json:"failure_reason,omitempty"`
}

// ContactData is openapi.yaml's ContactEventData: the data of contact.opted_out and
// contact.opted_in.
type ContactData struct {
	ID          string         `json:"id"`
	PhoneNumber string         `json:"phone_number"`
	Email       *string        `json:"email,omitempty"`
	FirstName   *string        `json:"first_name,omitempty"`
	LastName    *string        `json:"last_name,omitempty"`
	Metadata    store.Metadata `json:"metadata"`
}

// ContactOf is a contact as events carry it.
func ContactOf(c *store.Contact) Contact {
	return Contact{ID: c.ID, PhoneNumber: c.PhoneNumber, Email: c.Email, FirstName: c.FirstName, LastName: c.LastName,
		Metadata: OrEmpty(c.Metadata), OutboundDisabled: c.OutboundDisabled, OptedOut: c.OptedOut, CreatedAt: c.CreatedAt}
}

// ContactDataOf is the data of a contact.opted_out or contact.opted_in event of c.
func ContactDataOf(c *store.Contact) ContactData {
	return ContactData{ID: c.ID, PhoneNumber: c.PhoneNumber, Email: c.Email, FirstName: c.FirstName, LastName: c.LastName,
		Metadata: OrEmpty(c.Metadata)}
}

// NumberOf is a number as conversations in events show it.
func NumberOf(n *store.PhoneNumber) PhoneNumber {
	return PhoneNumber{ID: n.ID, Metadata: OrEmpty(n.Metadata), Name: n.Name, Number: n.Number, Type: n.Type}
}

// OrEmpty is m, or empty metadata when m is nil: events always carry a metadata object.
func OrEmpty(m store.Metadata) store.Metadata {
	if m == nil {
		return store.Metadata{}
	}
	return m
}

// ConversationCreatedData is openapi.yaml's ConversationCreatedEventData.
type ConversationCreatedData struct {
	ID          string      `json:"id"`
	PhoneNumber PhoneNumber `json:"phone_number"`
	Contact     Contact     `json:"contact"`
}

// ConversationCreated is the data of conversation.created.
func ConversationCreated(cv *store.Conversation, c *store.Contact, n *store.PhoneNumber) ConversationCreatedData {
	return ConversationCreatedData{cv.ID, NumberOf(n), ContactOf(c)}
}

// CampaignStatusData is openapi.yaml's CampaignApprovedEventData and CampaignDeactivatedEventData.
type CampaignStatusData struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// CampaignApproved is the data of campaign.approved.
func CampaignApproved(c *store.Campaign) CampaignStatusData {
	return CampaignStatusData{ID: c.ID, Status: store.CampaignActive}
}

// NumberCampaign is openapi.yaml's PhoneNumberCampaign: a number's campaign attachment.
type NumberCampaign struct {
	ID               string `json:"id"`
	AttachmentStatus string `json:"attachment_status"`
}

// NumberAttachedData is openapi.yaml's PhoneNumberAttachedToCampaignEventData: the number as
// conversations show it, plus its attachment and the deprecated campaign_id that mirrors it.
type NumberAttachedData struct {
	PhoneNumber
	Campaign   *NumberCampaign `json:"campaign"`
	CampaignID *string         `json:"campaign_id"`
}

// NumberAttached is the data of phone_number.attached_to_campaign.
func NumberAttached(n *store.PhoneNumber) NumberAttachedData {
	d := NumberAttachedData{PhoneNumber: NumberOf(n)}
	if n.CampaignID != nil && n.AttachmentStatus != nil {
		d.Campaign = &NumberCampaign{ID: *n.CampaignID, AttachmentStatus: *n.AttachmentStatus}
		d.CampaignID = n.CampaignID
	}
	return d
}

// LinkFollowedData is openapi.yaml's LinkFollowedEventData.
type LinkFollowedData struct {
	ID      string              `json:"id"`
	URL     string              `json:"url"`
	Message LinkFollowedMessage `json:"message"`
	// MessageID is deprecated: the same as Message.ID.
	MessageID string `json:"message_id"`
}

// LinkFollowedMessage is openapi.yaml's LinkFollowedMessage.
type LinkFollowedMessage struct {
	ID             string         `json:"id"`
	BlastID        *string        `json:"blast_id"`
	ConversationID string         `json:"conversation_id"`
	Metadata       store.Metadata `json:"metadata"`
}

// CallData is openapi.yaml's CallEndedEventData (the Call): a call as voice events carry it.
type CallData struct {
	ID            string    `json:"id"`
	Contact       Contact   `json:"contact"`
	Duration      int       `json:"duration"`
	InitiatedAt   time.Time `json:"initiated_at"`
	Status        string    `json:"status"`
	From          *string   `json:"from"`
	To            *string   `json:"to"`
	PhoneNumberID *string   `json:"phone_number_id"`
}

// RecordingData is openapi.yaml's RecordingCompletedEventData.
type RecordingData struct {
	ID       string   `json:"id"`
	Duration int      `json:"duration"`
	Call     CallData `json:"call"`
}

// VoicemailData is openapi.yaml's VoicemailReceivedEventData.
type VoicemailData struct {
	ID          string   `json:"id"`
	RecordingID string   `json:"recording_id"`
	Duration    int      `json:"duration"`
	Call        CallData `json:"call"`
}

// CallOf is a call as voice events carry it.
func CallOf(c *store.Call, contact *store.Contact) CallData {
	return CallData{
		ID: c.ID, Contact: ContactOf(contact), Duration: c.Duration, InitiatedAt: c.InitiatedAt.UTC(), Status: c.Status,
		From: &c.FromNumber, To: &c.ToNumber, PhoneNumberID: &c.PhoneNumberID,
	}
}
