package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
)

// Request body limits: 1 MiB everywhere (decisions §1) except blast creation, whose `to` may list
// 100,000 numbers in one request (about 1.6 MB of JSON); larger sends go through audiences.
const (
	bodyLimit      = "1MiB"
	blastBodyLimit = "4MiB"
)

// blastRoute is the route of blast creation.
var blastRoute = routeKey{http.MethodPost, "/accounts/:account_id/blasts"}

// bodyLimits applies the body limit of each route.
func bodyLimits() echo.MiddlewareFunc {
	small, large := middleware.BodyLimit(bodyLimit), middleware.BodyLimit(blastBodyLimit)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		s, l := small(next), large(next)
		return func(c echo.Context) error {
			if routeOf(c) == blastRoute {
				return l(c)
			}
			return s(c)
		}
	}
}

// CreateBlast stores a blast and schedules its fan-out.
func (s *Server) CreateBlast(ctx context.Context, req gen.CreateBlastRequestObject) (gen.CreateBlastResponseObject, error) {
	b := req.Body
	p := principal(ctx)
	params := service.BlastParams{ProjectID: p.ProjectID, AccountID: req.AccountId, Demo: p.Demo, From: b.From, Body: b.Body,
		Name: b.Name, SendAt: b.SendAt}
	params.LinkShortening = shortenLinks(b.Settings)
	if b.Attachments != nil {
		for _, a := range *b.Attachments {
			params.Attachments = append(params.Attachments, a.Url)
		}
	}
	for _, list := range []struct {
		from *[]string
		to   *[]string
	}{{b.To, &params.To}, {b.Contacts, &params.Contacts}, {b.Segments, &params.Segments}} {
		if list.from != nil {
			*list.to = *list.from
		}
	}
	v, err := s.blasts.Create(ctx, params)
	if err != nil {
		return nil, err
	}
	return gen.CreateBlast201JSONResponse(blastOut(v)), nil
}

// ListBlasts lists an account's blasts with their progress, newest first.
func (s *Server) ListBlasts(ctx context.Context, req gen.ListBlastsRequestObject) (gen.ListBlastsResponseObject, error) {
	p := req.Params
	rows, cur, err := s.blasts.List(ctx, principal(ctx).ProjectID, req.AccountId, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListBlasts200JSONResponse{Data: mapSlice(rows, blastOut), Pagination: pagination(cur)}, nil
}

// GetBlast returns a blast with its progress.
func (s *Server) GetBlast(ctx context.Context, req gen.GetBlastRequestObject) (gen.GetBlastResponseObject, error) {
	v, err := s.blasts.Get(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetBlast200JSONResponse(blastOut(v)), nil
}

// CancelBlast cancels a scheduled blast, or what a sending blast has not sent yet.
func (s *Server) CancelBlast(ctx context.Context, req gen.CancelBlastRequestObject) (gen.CancelBlastResponseObject, error) {
	v, err := s.blasts.Cancel(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.CancelBlast200JSONResponse(blastOut(v)), nil
}

func blastOut(v *service.BlastView) gen.Blast {
	atts := make([]gen.BlastAttachment, len(v.Attachments))
	for i, u := range v.Attachments {
		atts[i] = gen.BlastAttachment{Url: u}
	}
	return gen.Blast{Id: v.ID, Name: v.Name, Body: v.Body, Attachments: atts, SendAt: v.SendAt, Status: gen.BlastStatus(v.Status),
		CreatedAt: v.CreatedAt, Recipients: v.Recipients, Queued: v.Queued, Sent: v.Sent, Delivered: v.Delivered,
		Failed: v.Failed, Skipped: v.Skipped}
}
