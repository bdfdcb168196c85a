package server

import (
	"context"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

func campaignOut(c *store.Campaign) gen.Campaign {
	p := c.Params
	return gen.Campaign{
		Id: c.ID, Status: gen.CampaignStatus(c.Status), UseCases: enums[gen.CampaignUseCase](p.UseCases),
		Description: p.Description, MessageSamples: nonNil(p.MessageSamples), ConsentFlow: p.ConsentFlow,
		Includes: enums[gen.CampaignInclude](p.Includes), PrivacyPolicyUrl: p.PrivacyPolicyURL,
		TermsAndConditionsUrl: p.TermsAndConditionsURL, LinkSample: p.LinkSample, Volume: gen.CampaignVolume(p.Volume),
		TcrId: c.TCRID, CreatedAt: c.CreatedAt,
	}
}

// CreateCampaign registers a 10DLC campaign for one of the caller's accounts.
func (s *Server) CreateCampaign(ctx context.Context, req gen.CreateCampaignRequestObject) (gen.CreateCampaignResponseObject, error) {
	b := req.Body
	c, err := s.numbers.CreateCampaign(ctx, principal(ctx).ProjectID, req.AccountId, service.CampaignFields{
		UseCases: strs(b.UseCases), Description: b.Description, MessageSamples: b.MessageSamples, ConsentFlow: b.ConsentFlow,
		Includes: strs(b.Includes), PrivacyPolicyURL: b.PrivacyPolicyUrl, TermsAndConditionsURL: b.TermsAndConditionsUrl,
		LinkSample: b.LinkSample, Volume: (*string)(b.Volume),
	}, b.TcrId, string(deref(b.Carrier)))
	if err != nil {
		return nil, err
	}
	return gen.CreateCampaign201JSONResponse(campaignOut(c)), nil
}

// ListCampaigns lists an account's campaigns, newest first.
func (s *Server) ListCampaigns(ctx context.Context, req gen.ListCampaignsRequestObject) (gen.ListCampaignsResponseObject, error) {
	p := req.Params
	rows, cur, err := s.store.ListCampaigns(ctx, principal(ctx).ProjectID, req.AccountId, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListCampaigns200JSONResponse{Data: mapSlice(rows, campaignOut), Pagination: pagination(cur)}, nil
}

// GetCampaign returns one campaign.
func (s *Server) GetCampaign(ctx context.Context, req gen.GetCampaignRequestObject) (gen.GetCampaignResponseObject, error) {
	c, err := s.store.GetCampaign(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetCampaign200JSONResponse(campaignOut(c)), nil
}

// UpdateCampaign amends a campaign that is not approved yet.
func (s *Server) UpdateCampaign(ctx context.Context, req gen.UpdateCampaignRequestObject) (gen.UpdateCampaignResponseObject, error) {
	b := req.Body
	c, err := s.numbers.UpdateCampaign(ctx, principal(ctx).ProjectID, req.Id, service.CampaignFields{
		UseCases: strs(b.UseCases), Description: b.Description, MessageSamples: b.MessageSamples, ConsentFlow: b.ConsentFlow,
		Includes: strs(b.Includes), PrivacyPolicyURL: b.PrivacyPolicyUrl, TermsAndConditionsURL: b.TermsAndConditionsUrl,
		LinkSample: b.LinkSample, Volume: (*string)(b.Volume),
	})
	if err != nil {
		return nil, err
	}
	return gen.UpdateCampaign200JSONResponse(campaignOut(c)), nil
}

// strs converts an optional list of enum values to strings.
func strs[T ~string](in *[]T) *[]string {
	if in == nil {
		return nil
	}
	out := enums[string](*in)
	return &out
}

// enums converts between lists of strings and of enum values; the result is never null.
func enums[T, S ~string](in []S) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = T(v)
	}
	return out
}

func nonNil(in []string) []string {
	if in == nil {
		return []string{}
	}
	return in
}

// DeactivateCampaign deactivates a campaign and withdraws it at its carrier.
func (s *Server) DeactivateCampaign(ctx context.Context, req gen.DeactivateCampaignRequestObject) (gen.DeactivateCampaignResponseObject, error) {
	c, err := s.numbers.DeactivateCampaign(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.DeactivateCampaign200JSONResponse(campaignOut(c)), nil
}

// ResendBrandVerificationMessage asks the registry to text a sole proprietor its brand
// verification code again; the send is a job.
func (s *Server) ResendBrandVerificationMessage(ctx context.Context, req gen.ResendBrandVerificationMessageRequestObject) (gen.ResendBrandVerificationMessageResponseObject, error) {
	if _, err := s.numbers.ResendBrandVerification(ctx, principal(ctx).ProjectID, req.AccountId); err != nil {
		return nil, err
	}
	return gen.ResendBrandVerificationMessage202JSONResponse{Status: gen.Enqueued}, nil
}
