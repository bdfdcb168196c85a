package server

import (
	"context"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/store"
)

func callOut(v *store.CallView) gen.Call {
	c := &v.Call
	return gen.Call{
		Id: c.ID, Contact: contactOut(&v.Contact), Duration: c.Duration, InitiatedAt: c.InitiatedAt.UTC(),
		Status: gen.CallStatus(c.Status), From: &c.FromNumber, To: &c.ToNumber, PhoneNumberId: &c.PhoneNumberID,
	}
}

// GetCall returns one call.
func (s *Server) GetCall(ctx context.Context, req gen.GetCallRequestObject) (gen.GetCallResponseObject, error) {
	v, err := s.store.GetCall(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetCall200JSONResponse(callOut(v)), nil
}

// ListCalls lists an account's calls, newest first.
func (s *Server) ListCalls(ctx context.Context, req gen.ListCallsRequestObject) (gen.ListCallsResponseObject, error) {
	p := req.Params
	rows, cur, err := s.store.ListCalls(ctx, principal(ctx).ProjectID, req.AccountId, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListCalls200JSONResponse{Data: mapSlice(rows, callOut), Pagination: pagination(cur)}, nil
}
