package server

import (
	"context"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/store"
)

func audienceOut(a *store.Audience) gen.Audience {
	return gen.Audience{Id: a.ID, Name: a.Name, CreatedAt: a.CreatedAt}
}

// CreateAudience adds an audience to one of the caller's accounts.
func (s *Server) CreateAudience(ctx context.Context, req gen.CreateAudienceRequestObject) (gen.CreateAudienceResponseObject, error) {
	a, err := s.audiences.Create(ctx, principal(ctx).ProjectID, req.AccountId, req.Body.Name)
	if err != nil {
		return nil, err
	}
	return gen.CreateAudience201JSONResponse(audienceOut(a)), nil
}

// ListAudiences lists an account's audiences, newest first.
func (s *Server) ListAudiences(ctx context.Context, req gen.ListAudiencesRequestObject) (gen.ListAudiencesResponseObject, error) {
	p := req.Params
	rows, cur, err := s.audiences.List(ctx, principal(ctx).ProjectID, req.AccountId, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListAudiences200JSONResponse{Data: mapSlice(rows, audienceOut), Pagination: pagination(cur)}, nil
}

// GetAudience returns one audience.
func (s *Server) GetAudience(ctx context.Context, req gen.GetAudienceRequestObject) (gen.GetAudienceResponseObject, error) {
	a, err := s.audiences.Get(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetAudience200JSONResponse(audienceOut(a)), nil
}

// AddAudienceContact adds a contact of the audience's account to it.
func (s *Server) AddAudienceContact(ctx context.Context, req gen.AddAudienceContactRequestObject) (gen.AddAudienceContactResponseObject, error) {
	c, err := s.audiences.AddContact(ctx, principal(ctx).ProjectID, req.AudienceId, req.Body.Id)
	if err != nil {
		return nil, err
	}
	return gen.AddAudienceContact201JSONResponse(contactOut(c)), nil
}

// ListAudienceContacts lists an audience's contacts, most recently added first.
func (s *Server) ListAudienceContacts(ctx context.Context, req gen.ListAudienceContactsRequestObject) (gen.ListAudienceContactsResponseObject, error) {
	p := req.Params
	rows, cur, err := s.audiences.Contacts(ctx, principal(ctx).ProjectID, req.AudienceId, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListAudienceContacts200JSONResponse{Data: mapSlice(rows, contactOut), Pagination: pagination(cur)}, nil
}

// RemoveAudienceContact removes a contact from an audience (the contact itself stays).
func (s *Server) RemoveAudienceContact(ctx context.Context, req gen.RemoveAudienceContactRequestObject) (gen.RemoveAudienceContactResponseObject, error) {
	c, err := s.audiences.RemoveContact(ctx, principal(ctx).ProjectID, req.AudienceId, req.ContactId)
	if err != nil {
		return nil, err
	}
	return gen.RemoveAudienceContact200JSONResponse(contactOut(c)), nil
}
