package server

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

func phoneNumberOut(n *store.PhoneNumber) gen.PhoneNumber {
	out := gen.PhoneNumber{
		Id: n.ID, Number: n.Number, Type: gen.PhoneNumberType(n.Type), Name: n.Name, Metadata: metadataOut(n.Metadata),
		CreatedAt: n.CreatedAt,
	}
	if n.CampaignID != nil && n.AttachmentStatus != nil {
		out.Campaign = &gen.PhoneNumberCampaign{Id: *n.CampaignID, AttachmentStatus: gen.CampaignAttachmentStatus(*n.AttachmentStatus)}
		out.CampaignId = n.CampaignID
	}
	return out
}

// ListAvailablePhoneNumbers searches a carrier's inventory (the default one unless named), a page
// at a time.
func (s *Server) ListAvailablePhoneNumbers(ctx context.Context, req gen.ListAvailablePhoneNumbersRequestObject) (gen.ListAvailablePhoneNumbersResponseObject, error) {
	p := req.Params
	q := service.NumberSearch{Type: string(p.Type), Country: string(deref(p.Country)), AreaCode: deref(p.AreaCode), Limit: deref(p.Limit),
		Carrier: string(deref(p.Carrier))}
	if q.Limit <= 0 {
		q.Limit = 25
	}
	var err error
	if q.Offset, err = searchOffset(p.After, p.Before); err != nil {
		return nil, err
	}
	found, more, err := s.numbers.Available(ctx, principal(ctx).ProjectID, req.AccountId, q)
	if err != nil {
		return nil, err
	}
	out := make([]gen.AvailablePhoneNumber, len(found))
	for i, a := range found {
		out[i] = gen.AvailablePhoneNumber{Number: a.Number, Country: gen.Country(a.Country), Type: gen.AvailablePhoneNumberType(a.Type)}
	}
	var page gen.Pagination
	if more {
		page.NextCursor = searchCursor(q.Offset + q.Limit)
	}
	if q.Offset > 0 {
		page.PreviousCursor = searchCursor(max(q.Offset-q.Limit, 0))
	}
	return gen.ListAvailablePhoneNumbers200JSONResponse{Data: out, Pagination: page}, nil
}

// searchCursor is the opaque cursor of a number search's page: the offset at which it starts.
func searchCursor(offset int) *string {
	c := base64.RawURLEncoding.EncodeToString([]byte("av1:" + strconv.Itoa(offset)))
	return &c
}

// searchOffset decodes the after or before cursor of a number search into its page's offset.
func searchOffset(after, before *string) (int, error) {
	param, c := "after", deref(after)
	switch {
	case after != nil && before != nil:
		return 0, service.Invalid("before", "cannot be combined with after")
	case before != nil:
		param, c = "before", *before
	case after == nil:
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	n, perr := strconv.Atoi(strings.TrimPrefix(string(b), "av1:"))
	if err != nil || perr != nil || !strings.HasPrefix(string(b), "av1:") || n < 0 || n >= service.MaxAvailableWindow {
		return 0, service.Invalid(param, "is not a cursor returned by this API")
	}
	return n, nil
}

// PurchasePhoneNumber buys a number for one of the caller's accounts.
func (s *Server) PurchasePhoneNumber(ctx context.Context, req gen.PurchasePhoneNumberRequestObject) (gen.PurchasePhoneNumberResponseObject, error) {
	b := req.Body
	n, err := s.numbers.Purchase(ctx, principal(ctx).ProjectID, req.AccountId, service.Purchase{
		Number: deref(b.PhoneNumber), AreaCode: deref(b.AreaCode), Type: string(deref(b.Type)), Country: string(deref(b.Country)),
		Latitude: b.Latitude, Longitude: b.Longitude, Name: b.Name, Carrier: string(deref(b.Carrier)),
	})
	if err != nil {
		return nil, err
	}
	return gen.PurchasePhoneNumber201JSONResponse(phoneNumberOut(n)), nil
}

// ListPhoneNumbers lists the numbers an account holds, newest first.
func (s *Server) ListPhoneNumbers(ctx context.Context, req gen.ListPhoneNumbersRequestObject) (gen.ListPhoneNumbersResponseObject, error) {
	p := req.Params
	rows, cur, err := s.store.ListPhoneNumbers(ctx, principal(ctx).ProjectID, req.AccountId, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListPhoneNumbers200JSONResponse{Data: mapSlice(rows, phoneNumberOut), Pagination: pagination(cur)}, nil
}

// GetPhoneNumber returns a number the caller's project holds.
func (s *Server) GetPhoneNumber(ctx context.Context, req gen.GetPhoneNumberRequestObject) (gen.GetPhoneNumberResponseObject, error) {
	n, err := s.store.GetPhoneNumber(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetPhoneNumber200JSONResponse(phoneNumberOut(n)), nil
}

// UpdatePhoneNumber renames a number, replaces its metadata and/or attaches it to a campaign; a
// request without a body changes nothing.
func (s *Server) UpdatePhoneNumber(ctx context.Context, req gen.UpdatePhoneNumberRequestObject) (gen.UpdatePhoneNumberResponseObject, error) {
	var patch service.NumberPatch
	if b := req.Body; b != nil {
		md, err := metadataIn("metadata", b.Metadata)
		if err != nil {
			return nil, err
		}
		patch = service.NumberPatch{Name: b.Name, CampaignID: b.CampaignId, Metadata: md}
	}
	n, err := s.numbers.UpdateNumber(ctx, principal(ctx).ProjectID, req.Id, patch)
	if err != nil {
		return nil, err
	}
	return gen.UpdatePhoneNumber200JSONResponse(phoneNumberOut(n)), nil
}

// ReleasePhoneNumber gives a number back; it is gone from the API afterwards.
func (s *Server) ReleasePhoneNumber(ctx context.Context, req gen.ReleasePhoneNumberRequestObject) (gen.ReleasePhoneNumberResponseObject, error) {
	n, err := s.numbers.Release(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.ReleasePhoneNumber200JSONResponse(phoneNumberOut(n)), nil
}

// deref is the value p points to, or the zero value.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
