package service

import (
	"context"

	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// messageData is a message as message.* events carry it.
func (m *Messages) messageData(v *store.MessageView) webhooks.MessageData {
	atts := make([]webhooks.Attachment, 0, len(v.Attachments))
	for _, a := range v.Attachments {
		atts = append(atts, webhooks.Attachment{ID: a.ID, Type: a.Type, URL: m.AttachmentURL(a.ID), Status: AttachmentStatus(&a)})
	}
	msg := &v.Message
	return webhooks.MessageData{
		ID: msg.ID, Status: msg.Status, Direction: msg.Direction, Body: msg.Body, Attachments: atts, BlastID: msg.BlastID,
		Conversation: webhooks.Conversation{ID: msg.ConversationID, Contact: webhooks.ContactOf(&v.Contact),
			PhoneNumber: webhooks.NumberOf(&v.PhoneNumber)},
		Metadata: webhooks.OrEmpty(msg.Metadata), Encoding: msg.Encoding, Segments: msg.Segments, Type: msg.Type,
		CreatedAt: msg.CreatedAt, SendAt: msg.SendAt, SentAt: msg.SentAt, DeliveredAt: msg.DeliveredAt,
		FailedAt: msg.FailedAt, ReceivedAt: msg.ReceivedAt, FailureReason: msg.FailureReason,
	}
}

// messageEvent publishes a message.* event for the message as it now is, inside tx. The message's
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
	return webhooks.Publish(ctx, tx, e)
}

// messageEvents publishes an event of type typ for each message as it now is, inside tx.
func (m *Messages) messageEvents(ctx context.Context, tx *store.Store, typ string, msgs []store.Message) error {
	return m.messageEventGroups(ctx, tx, eventGroup{typ, msgs})
}

// eventGroup is messages that each get an event of one type.
type eventGroup struct {
	typ  string
	msgs []store.Message
}

// messageEventGroups publishes the events of several groups inside tx, with one read of the
// messages' contacts and numbers and one insert, in the groups' order (which is their ids' order).
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
	return webhooks.Publish(ctx, tx, evs...)
}

// publish publishes one event of a project's account, with data as its data object, inside tx.
func publish(ctx context.Context, tx *store.Store, projectID, accountID, typ string, data any) error {
	e, err := store.NewEvent(projectID, accountID, typ, data)
	if err != nil {
		return err
	}
	return webhooks.Publish(ctx, tx, e)
}

// conversationEvent publishes conversation.created.
func conversationEvent(ctx context.Context, tx *store.Store, cv *store.Conversation, c *store.Contact, n *store.PhoneNumber) error {
	return publish(ctx, tx, cv.ProjectID, cv.AccountID, webhooks.EventConversationCreated, webhooks.ConversationCreated(cv, c, n))
}

// contactEvent publishes contact.opted_out or contact.opted_in.
func contactEvent(ctx context.Context, tx *store.Store, typ string, c *store.Contact) error {
	return publish(ctx, tx, c.ProjectID, c.AccountID, typ, webhooks.ContactDataOf(c))
}

// insertAttachedEvent publishes phone_number.attached_to_campaign for a number that has just
// become attached; call it in the transaction that attached it.
func insertAttachedEvent(ctx context.Context, tx *store.Store, n *store.PhoneNumber) error {
	return publish(ctx, tx, n.ProjectID, *n.AccountID, webhooks.EventPhoneNumberAttachedCampaign, webhooks.NumberAttached(n))
}

// callEndedEvent publishes call.ended.
func callEndedEvent(ctx context.Context, tx *store.Store, c *store.Call, contact *store.Contact) error {
	return publish(ctx, tx, c.ProjectID, c.AccountID, webhooks.EventCallEnded, webhooks.CallOf(c, contact))
}

// recordingEvents publishes recording.completed, and voicemail.received when the recording is a
// voicemail (vm not nil).
func recordingEvents(ctx context.Context, tx *store.Store, r *store.Recording, vm *store.Voicemail, c *store.Call, contact *store.Contact) error {
	call := webhooks.CallOf(c, contact)
	if err := publish(ctx, tx, r.ProjectID, r.AccountID, webhooks.EventRecordingCompleted,
		webhooks.RecordingData{ID: r.ID, Duration: r.Duration, Call: call}); err != nil {
		return err
	}
	if vm == nil {
		return nil
	}
	return publish(ctx, tx, vm.ProjectID, vm.AccountID, webhooks.EventVoicemailReceived,
		webhooks.VoicemailData{ID: vm.ID, RecordingID: vm.RecordingID, Duration: vm.Duration, Call: call})
}
