package server

import (
	"context"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/store"
)

func tollFreeCampaignOut(t *store.TollFreeCampaign) gen.TollFreeCampaign {
	p := t.Params
	return gen.TollFreeCampaign{
		Id: t.ID, PhoneNumberId: t.PhoneNumberID, Status: gen.TollFreeCampaignStatus(t.Status),
		UseCases: enums[gen.TollFreeUseCase](p.UseCases), Description: p.Description, MessageSamples: nonNil(p.MessageSamples),
		Includes: enums[gen.TollFreeCampaignInclude](p.Includes), PrivacyPolicyUrl: p.PrivacyPolicyURL,
		TermsAndConditionsUrl: p.TermsAndConditionsURL,
	}
}

// CreateTollFreeCampaign submits the verification of a toll-free number of one of the caller's
// accounts.
func (s *Server) CreateTollFreeCampaign(ctx context.Context, req gen.CreateTollFreeCampaignRequestObject) (gen.CreateTollFreeCampaignResponseObject, error) {
	b := req.Body
	t, err := s.numbers.CreateTollFreeCampaign(ctx, principal(ctx).ProjectID, req.AccountId, b.PhoneNumberId, store.TollFreeParams{
		UseCases: enums[string](b.UseCases), Description: b.Description, MessageSamples: b.MessageSamples,
		Includes: enums[string](b.Includes), PrivacyPolicyURL: b.PrivacyPolicyUrl, TermsAndConditionsURL: b.TermsAndConditionsUrl,
	})
	if err != nil {
		return nil, err
	}
	return gen.CreateTollFreeCampaign201JSONResponse(tollFreeCampaignOut(t)), nil
}

// ListTollFreeCampaigns lists an account's toll-free campaigns, newest first.
func (s *Server) ListTollFreeCampaigns(ctx context.Context, req gen.ListTollFreeCampaignsRequestObject) (gen.ListTollFreeCampaignsResponseObject, error) {
	p := req.Params
	rows, cur, err := s.store.ListTollFreeCampaigns(ctx, principal(ctx).ProjectID, req.AccountId, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListTollFreeCampaigns200JSONResponse{Data: mapSlice(rows, tollFreeCampaignOut), Pagination: pagination(cur)}, nil
}

// GetTollFreeCampaign returns one toll-free campaign.
func (s *Server) GetTollFreeCampaign(ctx context.Context, req gen.GetTollFreeCampaignRequestObject) (gen.GetTollFreeCampaignResponseObject, error) {
	t, err := s.store.GetTollFreeCampaign(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetTollFreeCampaign200JSONResponse(tollFreeCampaignOut(t)), nil
}

// CancelTollFreeCampaign cancels a toll-free campaign.
func (s *Server) CancelTollFreeCampaign(ctx context.Context, req gen.CancelTollFreeCampaignRequestObject) (gen.CancelTollFreeCampaignResponseObject, error) {
	t, err := s.numbers.CancelTollFreeCampaign(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.CancelTollFreeCampaign200JSONResponse(tollFreeCampaignOut(t)), nil
}
