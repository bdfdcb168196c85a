package service

import (
	"fmt"
	"strings"
	"time"

	"github.com/switchboard/switchboard/store"
)

// zeroID is the TypeID of this prefix whose suffix is all zeros: a valid id that names nothing,
// which test events carry so that a receiver can tell them from real ones.
func zeroID(prefix string) string { return prefix + "_" + strings.Repeat("0", 26) }

// sampleEventData returns the data of a test event of type typ, shaped as that type's schema in
// openapi.yaml, at time at.
func sampleEventData(typ string, at time.Time) (any, error) {
	first, last := "Test", "Contact"
	body := "This is a test event from Switchboard."
	name := "Test number"
	contact := eventContact{ID: zeroID(store.PrefixContact), PhoneNumber: "+15005550100", FirstName: &first, LastName: &last,
		Metadata: store.Metadata{}, CreatedAt: at}
	number := eventPhoneNumber{ID: zeroID(store.PrefixPhoneNumber), Metadata: store.Metadata{}, Name: &name,
		Number: "+15005550199", Type: store.NumberLocal}
	message := func(status, direction string) messageEventData {
		m := messageEventData{ID: zeroID(store.PrefixMessage), Status: status, Direction: direction, Body: &body,
			Attachments: []eventAttachment{}, Conversation: eventConversation{ID: zeroID(store.PrefixConversation),
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
	call := callEventData{ID: zeroID(store.PrefixCall), Contact: contact, Duration: 30, InitiatedAt: at, Status: "completed",
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
		return conversationCreatedData(&store.Conversation{ID: zeroID(store.PrefixConversation)},
			&store.Contact{ID: contact.ID, PhoneNumber: contact.PhoneNumber, FirstName: &first, LastName: &last, CreatedAt: at},
			&store.PhoneNumber{ID: number.ID, Name: &name, Number: number.Number, Type: number.Type}), nil
	case EventContactOptedIn, EventContactOptedOut:
		return contactEventData{ID: contact.ID, PhoneNumber: contact.PhoneNumber, FirstName: &first, LastName: &last,
			Metadata: store.Metadata{}}, nil
	case EventCampaignApproved:
		return campaignStatusData{ID: zeroID(store.PrefixCampaign), Status: store.CampaignActive}, nil
	case EventCampaignDeactivated:
		return campaignStatusData{ID: zeroID(store.PrefixCampaign), Status: store.CampaignDeactivated}, nil
	case EventPhoneNumberAttachedCampaign:
		cpn, attached := zeroID(store.PrefixCampaign), "attached"
		return numberAttached(&store.PhoneNumber{ID: number.ID, Name: &name, Number: number.Number, Type: number.Type,
			CampaignID: &cpn, AttachmentStatus: &attached}), nil
	case EventLinkFollowed:
		msg := zeroID(store.PrefixMessage)
		return linkFollowedData{ID: zeroID(store.PrefixLink), URL: "https://example.com/", MessageID: msg,
			Message: linkFollowedMessage{ID: msg, ConversationID: zeroID(store.PrefixConversation), Metadata: store.Metadata{}}}, nil
	case EventCallEnded:
		return call, nil
	case EventRecordingCompleted:
		return recordingEventData{ID: zeroID(store.PrefixRecording), Duration: 12, Call: call}, nil
	case EventVoicemailReceived:
		call.Status, call.Duration = "missed", 0
		return voicemailEventData{ID: zeroID(store.PrefixVoicemail), RecordingID: zeroID(store.PrefixRecording), Duration: 12,
			Call: call}, nil
	}
	return nil, Invalid("event_type", fmt.Sprintf("%q is not an event type (%s)", typ, strings.Join(WebhookEventTypes, ", ")))
}
