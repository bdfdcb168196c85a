package webhooks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard/switchboard/service/problem"
	"github.com/switchboard/switchboard/store"
)

// zeroID is the TypeID of this prefix whose suffix is all zeros: a valid id that names nothing,
// which test events carry so that a receiver can tell them from real ones.
func zeroID(prefix string) string { return prefix + "_" + strings.Repeat("0", 26) }

// SampleEvent returns a test event of type typ for a project, made at time at: its data is a
// sample of the type's schema in openapi.yaml whose ids are all zeros (acct_000…, msg_000…), its
// account too, so that a receiver can tell it from a real event. An unknown type is a
// validation_error.
func SampleEvent(projectID, typ string, at time.Time) (store.Event, error) {
	data, err := sampleEventData(typ, at)
	if err != nil {
		return store.Event{}, err
	}
	return store.NewEvent(projectID, zeroID(store.PrefixAccount), typ, data)
}

// PublishSample publishes a sample event (SampleEvent) to one endpoint only, with its delivery, in
// tx: an operator's test of the endpoint, which no other endpoint of the project receives.
func PublishSample(ctx context.Context, tx *store.Store, ev *store.Event, endpointID string) (*store.WebhookDelivery, error) {
	return tx.InsertEventFor(ctx, ev, endpointID)
}

// sampleEventData returns the data of a test event of type typ, shaped as that type's schema in
// openapi.yaml, at time at.
func sampleEventData(typ string, at time.Time) (any, error) {
	first, last := "Test", "Contact"
	body := "This is a test event from Switchboard."
	name := "Test number"
	contact := Contact{ID: zeroID(store.PrefixContact), PhoneNumber: "+15005550100", FirstName: &first, LastName: &last,
		Metadata: store.Metadata{}, CreatedAt: at}
	number := PhoneNumber{ID: zeroID(store.PrefixPhoneNumber), Metadata: store.Metadata{}, Name: &name,
		Number: "+15005550199", Type: store.NumberLocal}
	message := func(status, direction string) MessageData {
		m := MessageData{ID: zeroID(store.PrefixMessage), Status: status, Direction: direction, Body: &body,
			Attachments: []Attachment{}, Conversation: Conversation{ID: zeroID(store.PrefixConversation),
				Contact: contact, PhoneNumber: number}, Metadata: store.Metadata{}, Encoding: "gsm7", Segments: 1,
			Type: "sms", CreatedAt: at}
		switch status {
		case "sent":
			m.SentAt = &at
		case "delivered":
			m.SentAt, m.DeliveredAt = &at, &at
		case "failed":
			reason := "unknown_error"
			m.SentAt, m.FailedAt, m.FailureReason = &at, &at, &reason
		case "received":
			m.ReceivedAt = &at
		}
		return m
	}
	from, to, pn := contact.PhoneNumber, number.Number, number.ID
	call := CallData{ID: zeroID(store.PrefixCall), Contact: contact, Duration: 30, InitiatedAt: at, Status: "completed",
		From: &from, To: &to, PhoneNumberID: &pn}
	switch typ {
	case EventMessageSent:
		return message("sent", "outbound"), nil
	case EventMessageDelivered:
		return message("delivered", "outbound"), nil
	case EventMessageFailed:
		return message("failed", "outbound"), nil
	case EventMessageReceived:
		return message("received", "inbound"), nil
	case EventConversationCreated:
		return ConversationCreated(&store.Conversation{ID: zeroID(store.PrefixConversation)},
			&store.Contact{ID: contact.ID, PhoneNumber: contact.PhoneNumber, FirstName: &first, LastName: &last, CreatedAt: at},
			&store.PhoneNumber{ID: number.ID, Name: &name, Number: number.Number, Type: number.Type}), nil
	case EventContactOptedIn, EventContactOptedOut:
		return ContactData{ID: contact.ID, PhoneNumber: contact.PhoneNumber, FirstName: &first, LastName: &last,
			Metadata: store.Metadata{}}, nil
	case EventCampaignApproved:
		return CampaignStatusData{ID: zeroID(store.PrefixCampaign), Status: store.CampaignActive}, nil
	case EventCampaignDeactivated:
		return CampaignStatusData{ID: zeroID(store.PrefixCampaign), Status: store.CampaignDeactivated}, nil
	case EventPhoneNumberAttachedCampaign:
		cpn, attached := zeroID(store.PrefixCampaign), "attached"
		return NumberAttached(&store.PhoneNumber{ID: number.ID, Name: &name, Number: number.Number, Type: number.Type,
			CampaignID: &cpn, AttachmentStatus: &attached}), nil
	case EventLinkFollowed:
		msg := zeroID(store.PrefixMessage)
		return LinkFollowedData{ID: zeroID(store.PrefixLink), URL: "https://example.com/", MessageID: msg,
			Message: LinkFollowedMessage{ID: msg, ConversationID: zeroID(store.PrefixConversation), Metadata: store.Metadata{}}}, nil
	case EventCallEnded:
		return call, nil
	case EventRecordingCompleted:
		return RecordingData{ID: zeroID(store.PrefixRecording), Duration: 12, Call: call}, nil
	case EventVoicemailReceived:
		call.Status, call.Duration = "missed", 0
		return VoicemailData{ID: zeroID(store.PrefixVoicemail), RecordingID: zeroID(store.PrefixRecording), Duration: 12,
			Call: call}, nil
	}
	return nil, problem.Invalid("event_type", fmt.Sprintf("%q is not an event type (%s)", typ, strings.Join(EventTypes, ", ")))
}
