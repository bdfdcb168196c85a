package server

import (
	"context"
	"errors"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

func contactOut(c *store.Contact) gen.Contact {
	return gen.Contact{
		Id: c.ID, PhoneNumber: c.PhoneNumber, Email: (*openapi_types.Email)(c.Email), FirstName: c.FirstName,
		LastName: c.LastName, Metadata: metadataOut(c.Metadata), OutboundDisabled: c.OutboundDisabled,
		OptedOut: c.OptedOut, CreatedAt: c.CreatedAt,
	}
}

func duplicateContact(err error) error {
	if errors.Is(err, store.ErrDuplicate) {
		return service.Errorf(service.TypeConflict, "the account already has a contact with this phone number")
	}
	return err
}

// CreateContact adds a contact to one of the caller's accounts.
func (s *Server) CreateContact(ctx context.Context, req gen.CreateContactRequestObject) (gen.CreateContactResponseObject, error) {
	b := req.Body
	md, err := metadataIn("metadata", b.Metadata)
	if err != nil {
		return nil, err
	}
	c := &store.Contact{ProjectID: principal(ctx).ProjectID, AccountID: req.AccountId, PhoneNumber: b.PhoneNumber,
		Email: (*string)(b.Email), FirstName: b.FirstName, LastName: b.LastName, Metadata: md, OutboundDisabled: deref(b.OutboundDisabled)}
	if err := s.store.CreateContact(ctx, c); err != nil {
		return nil, duplicateContact(err)
	}
	return gen.CreateContact201JSONResponse(contactOut(c)), nil
}

// ListContacts lists an account's contacts, newest first.
func (s *Server) ListContacts(ctx context.Context, req gen.ListContactsRequestObject) (gen.ListContactsResponseObject, error) {
	p := req.Params
	rows, cur, err := s.store.ListContacts(ctx, principal(ctx).ProjectID, req.AccountId, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListContacts200JSONResponse{Data: mapSlice(rows, contactOut), Pagination: pagination(cur)}, nil
}

// GetContact returns one contact.
func (s *Server) GetContact(ctx context.Context, req gen.GetContactRequestObject) (gen.GetContactResponseObject, error) {
	c, err := s.store.GetContact(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetContact200JSONResponse(contactOut(c)), nil
}

// UpdateContact changes the fields present in the body and leaves the others.
func (s *Server) UpdateContact(ctx context.Context, req gen.UpdateContactRequestObject) (gen.UpdateContactResponseObject, error) {
	b := req.Body
	md, err := metadataIn("metadata", b.Metadata)
	if err != nil {
		return nil, err
	}
	c, err := s.store.UpdateContact(ctx, principal(ctx).ProjectID, req.Id, store.ContactPatch{
		PhoneNumber: b.PhoneNumber, Email: (*string)(b.Email), FirstName: b.FirstName, LastName: b.LastName,
		Metadata: md, OutboundDisabled: b.OutboundDisabled,
	})
	if err != nil {
		return nil, duplicateContact(err)
	}
	return gen.UpdateContact200JSONResponse(contactOut(c)), nil
}
