package server

import (
	"context"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
)

// GetUsage reports the project's billable usage per account and day.
func (s *Server) GetUsage(ctx context.Context, req gen.GetUsageRequestObject) (gen.GetUsageResponseObject, error) {
	var q service.UsageQuery
	if req.Params.From != nil {
		q.From = req.Params.From.Time
	}
	if req.Params.To != nil {
		q.To = req.Params.To.Time
	}
	if req.Params.AccountId != nil {
		q.AccountID = *req.Params.AccountId
	}
	r, err := s.usage.Report(ctx, principal(ctx).ProjectID, q)
	if err != nil {
		return nil, err
	}
	out, err := usageOut(r)
	return gen.GetUsage200JSONResponse(out), err
}

// usageOut is a usage report as the contract's Usage (the console shows the same).
func usageOut(r *service.UsageReport) (gen.Usage, error) {
	out := gen.Usage{From: date(r.From), To: date(r.To), Data: make([]gen.UsageDay, len(r.Days))}
	for i, d := range r.Days {
		day, err := time.Parse(time.DateOnly, d.Day)
		if err != nil {
			return out, err
		}
		out.Data[i] = gen.UsageDay{Date: date(day), AccountId: d.AccountID, SmsOutbound: d.SMSOutbound,
			SegmentsOutbound: d.SegmentsOutbound, SmsInbound: d.SMSInbound, SegmentsInbound: d.SegmentsInbound,
			MmsOutbound: d.MMSOutbound, MmsInbound: d.MMSInbound, VoiceMinutes: d.VoiceMinutes, Verifications: d.Verifications}
	}
	return out, nil
}

func date(t time.Time) openapi_types.Date { return openapi_types.Date{Time: t} }
