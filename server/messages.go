package server

import (
	"context"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// SendMessage stores a message and queues it for sending (or schedules it).
func (s *Server) SendMessage(ctx context.Context, req gen.SendMessageRequestObject) (gen.SendMessageResponseObject, error) {
	b := req.Body
	p := principal(ctx)
	md, err := metadataIn("metadata", b.Metadata)
	if err != nil {
		return nil, err
	}
	params := service.SendParams{ProjectID: p.ProjectID, AccountID: req.AccountId, Demo: p.Demo,
		To: b.To, From: b.From, Body: b.Body, Metadata: md, SendAt: b.SendAt,
		ShortenLinks: shortenLinks(b.Settings)}
	if c := b.Conversation; c != nil {
		cmd, err := metadataIn("conversation.contact.metadata", c.Contact.Metadata)
		if err != nil {
			return nil, err
		}
		params.Conversation = &service.ConversationParams{PhoneNumber: c.PhoneNumber, Contact: service.ContactParams{
			PhoneNumber: c.Contact.PhoneNumber, Email: (*string)(c.Contact.Email), FirstName: c.Contact.FirstName,
			LastName: c.Contact.LastName, Metadata: cmd, OutboundDisabled: deref(c.Contact.OutboundDisabled)}}
	}
	if b.Attachments != nil {
		for _, a := range *b.Attachments {
			params.Attachments = append(params.Attachments, a.Url)
		}
	}
	m, err := s.messages.Send(ctx, params)
	if err != nil {
		return nil, err
	}
	return sentMessage(s.messageOut(m)), nil
}

// GetMessage returns one message.
func (s *Server) GetMessage(ctx context.Context, req gen.GetMessageRequestObject) (gen.GetMessageResponseObject, error) {
	m, err := s.messages.Get(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetMessage200JSONResponse(s.messageOut(m)), nil
}

// ListMessages lists an account's messages, newest first, optionally of one conversation.
func (s *Server) ListMessages(ctx context.Context, req gen.ListMessagesRequestObject) (gen.ListMessagesResponseObject, error) {
	p := req.Params
	conv := ""
	if p.ConversationId != nil {
		conv = *p.ConversationId
	}
	rows, cur, err := s.messages.List(ctx, principal(ctx).ProjectID, req.AccountId, conv, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListMessages200JSONResponse{Data: mapSlice(rows, s.messageOut), Pagination: pagination(cur)}, nil
}

// CancelMessage cancels a scheduled message.
func (s *Server) CancelMessage(ctx context.Context, req gen.CancelMessageRequestObject) (gen.CancelMessageResponseObject, error) {
	m, err := s.messages.Cancel(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.CancelMessage200JSONResponse(s.messageOut(m)), nil
}

func (s *Server) messageOut(v *store.MessageView) gen.Message {
	m := &v.Message
	atts := make([]gen.Attachment, 0, len(v.Attachments))
	for _, a := range v.Attachments {
		status := gen.AttachmentStatus(service.AttachmentStatus(&a))
		atts = append(atts, gen.Attachment{Id: a.ID, Type: gen.AttachmentType(a.Type), Url: s.messages.AttachmentURL(a.ID), Status: &status})
	}
	out := gen.Message{
		Id: m.ID, Status: gen.MessageStatus(m.Status), Direction: gen.MessageDirection(m.Direction), Body: m.Body,
		Attachments: atts, BlastId: m.BlastID, Metadata: metadataOut(m.Metadata),
		Conversation: gen.MessageConversation{Id: m.ConversationID, Contact: contactOut(&v.Contact), PhoneNumber: conversationNumberOut(&v.PhoneNumber)},
		Encoding:     gen.MessageEncoding(m.Encoding), Segments: m.Segments, Type: gen.MessageType(m.Type), CreatedAt: m.CreatedAt,
		SendAt: m.SendAt, SentAt: m.SentAt, DeliveredAt: m.DeliveredAt, FailedAt: m.FailedAt, ReceivedAt: m.ReceivedAt,
	}
	if m.FailureReason != nil {
		r := gen.FailureReason(*m.FailureReason)
		out.FailureReason = &r
	}
	return out
}

func conversationNumberOut(n *store.PhoneNumber) gen.ConversationPhoneNumber {
	return gen.ConversationPhoneNumber{Id: n.ID, Metadata: metadataOut(n.Metadata), Name: n.Name, Number: n.Number,
		Type: gen.PhoneNumberType(n.Type)}
}
