package server

import (
	"context"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

func userOut(u *store.User) gen.User {
	return gen.User{Id: u.ID, FirstName: u.FirstName, LastName: u.LastName, Metadata: metadataOut(u.Metadata), PhotoUrl: u.PhotoURL}
}

// CreateUser adds a user to one of the caller's accounts.
func (s *Server) CreateUser(ctx context.Context, req gen.CreateUserRequestObject) (gen.CreateUserResponseObject, error) {
	b := req.Body
	md, err := metadataIn("metadata", b.Metadata)
	if err != nil {
		return nil, err
	}
	u := &store.User{ProjectID: principal(ctx).ProjectID, AccountID: req.AccountId, FirstName: b.FirstName,
		LastName: b.LastName, Metadata: md, PhotoURL: b.PhotoUrl}
	if err := s.store.CreateUser(ctx, u); err != nil {
		return nil, err
	}
	return gen.CreateUser201JSONResponse(userOut(u)), nil
}

// ListUsers lists an account's users, newest first.
func (s *Server) ListUsers(ctx context.Context, req gen.ListUsersRequestObject) (gen.ListUsersResponseObject, error) {
	p := req.Params
	rows, cur, err := s.store.ListUsers(ctx, principal(ctx).ProjectID, req.AccountId, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListUsers200JSONResponse{Data: mapSlice(rows, userOut), Pagination: pagination(cur)}, nil
}

// GetUser returns one user.
func (s *Server) GetUser(ctx context.Context, req gen.GetUserRequestObject) (gen.GetUserResponseObject, error) {
	u, err := s.store.GetUser(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetUser200JSONResponse(userOut(u)), nil
}

// UpdateUser changes the fields present in the body.
func (s *Server) UpdateUser(ctx context.Context, req gen.UpdateUserRequestObject) (gen.UpdateUserResponseObject, error) {
	b := req.Body
	md, err := metadataIn("metadata", b.Metadata)
	if err != nil {
		return nil, err
	}
	u, err := s.store.UpdateUser(ctx, principal(ctx).ProjectID, req.Id, store.UserPatch{
		FirstName: b.FirstName, LastName: b.LastName, Metadata: md, PhotoURL: b.PhotoUrl,
	})
	if err != nil {
		return nil, err
	}
	return gen.UpdateUser200JSONResponse(userOut(u)), nil
}

// DeleteUser deletes a user; its tokens stop working at once.
func (s *Server) DeleteUser(ctx context.Context, req gen.DeleteUserRequestObject) (gen.DeleteUserResponseObject, error) {
	u, err := s.store.DeleteUser(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.DeleteUser200JSONResponse(userOut(u)), nil
}

// CreateUserToken signs a short-lived token with which a user's embedded components authenticate.
func (s *Server) CreateUserToken(ctx context.Context, req gen.CreateUserTokenRequestObject) (gen.CreateUserTokenResponseObject, error) {
	u, err := s.store.GetUser(ctx, principal(ctx).ProjectID, req.UserId)
	if err != nil {
		return nil, err
	}
	seconds := service.TokenDefaultSeconds
	if req.Body != nil && req.Body.DurationSeconds != nil {
		seconds = *req.Body.DurationSeconds
	}
	tok, err := s.tokens.Issue(ctx, u.ID, u.AccountID, seconds)
	if err != nil {
		return nil, err
	}
	return gen.CreateUserToken201JSONResponse{Token: tok}, nil
}
