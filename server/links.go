package server

import (
	"context"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
)

// FollowLink redirects a short link to its original URL, recording the visit and its
// link.followed event in one transaction. An unknown code answers 404 not_found. A HEAD (link
// previewers send them) answers the same redirect without recording a visit.
func (s *Server) FollowLink(ctx context.Context, req gen.FollowLinkRequestObject) (gen.FollowLinkResponseObject, error) {
	var url string
	var err error
	if head, _ := ctx.Value(headKey{}).(bool); head {
		url, err = service.LinkTarget(ctx, s.store, req.Code)
	} else {
		url, err = service.FollowLink(ctx, s.store, req.Code, s.now())
	}
	if err != nil {
		return nil, err
	}
	return gen.FollowLink302Response{Headers: gen.FollowLink302ResponseHeaders{Location: url}}, nil
}
