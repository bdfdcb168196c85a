package server

import (
	"context"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
)

// FollowLink redirects a short link to its original URL, recording the visit and its
// link.followed event in one transaction. An unknown code answers 404 not_found.
func (s *Server) FollowLink(ctx context.Context, req gen.FollowLinkRequestObject) (gen.FollowLinkResponseObject, error) {
	url, err := service.FollowLink(ctx, s.store, req.Code, s.now())
	if err != nil {
		return nil, err
	}
	return gen.FollowLink302Response{Headers: gen.FollowLink302ResponseHeaders{Location: url}}, nil
}
