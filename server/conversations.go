package server

import (
	"context"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/store"
)

func conversationOut(c *store.ConversationView) gen.Conversation {
	n := conversationNumberOut(&c.PhoneNumber)
	return gen.Conversation{Id: c.ID, Contact: contactOut(&c.Contact), PhoneNumber: &n}
}

// ListConversations lists an account's conversations, newest first.
func (s *Server) ListConversations(ctx context.Context, req gen.ListConversationsRequestObject) (gen.ListConversationsResponseObject, error) {
	p := req.Params
	rows, cur, err := s.store.ListConversations(ctx, principal(ctx).ProjectID, req.AccountId, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListConversations200JSONResponse{Data: mapSlice(rows, conversationOut), Pagination: pagination(cur)}, nil
}

// GetConversation returns one conversation.
func (s *Server) GetConversation(ctx context.Context, req gen.GetConversationRequestObject) (gen.GetConversationResponseObject, error) {
	c, err := s.store.GetConversation(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetConversation200JSONResponse(conversationOut(c)), nil
}
