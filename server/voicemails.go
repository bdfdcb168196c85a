package server

import (
	"context"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/store"
)

func voicemailOut(v *store.VoicemailView) gen.Voicemail {
	return gen.Voicemail{Id: v.ID, RecordingId: v.RecordingID, Duration: v.Duration, Call: callOut(&v.Call), CreatedAt: v.CreatedAt.UTC()}
}

// GetVoicemail returns one voicemail.
func (s *Server) GetVoicemail(ctx context.Context, req gen.GetVoicemailRequestObject) (gen.GetVoicemailResponseObject, error) {
	v, err := s.store.GetVoicemail(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetVoicemail200JSONResponse(voicemailOut(v)), nil
}

// ListVoicemails lists an account's voicemails, newest first.
func (s *Server) ListVoicemails(ctx context.Context, req gen.ListVoicemailsRequestObject) (gen.ListVoicemailsResponseObject, error) {
	p := req.Params
	rows, cur, err := s.store.ListVoicemails(ctx, principal(ctx).ProjectID, req.AccountId, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListVoicemails200JSONResponse{Data: mapSlice(rows, voicemailOut), Pagination: pagination(cur)}, nil
}
