package server

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/gen"
)

// GetAttachmentFile redirects to a short-lived signed URL of the attachment's file.
func (s *Server) GetAttachmentFile(ctx context.Context, req gen.GetAttachmentFileRequestObject) (gen.GetAttachmentFileResponseObject, error) {
	loc, err := s.messages.AttachmentLocation(ctx, principal(ctx).ProjectID, req.AttachmentId)
	if err != nil {
		return nil, err
	}
	return gen.GetAttachmentFile302Response{Headers: gen.GetAttachmentFile302ResponseHeaders{Location: loc}}, nil
}

// serveFile is the public route behind signed file URLs (GET /files/{token}), outside the
// contract: whoever holds an unexpired signed URL (an API client redirected by
// GetAttachmentFile, or the carrier fetching MMS media) gets the bytes, without an API key.
func (s *Server) serveFile(c echo.Context) error {
	a, err := s.messages.OpenFile(c.Request().Context(), c.Param("token"))
	if err != nil {
		return err
	}
	f := storedFile{Name: a.ID, Data: a.Data}
	if a.ContentType != nil {
		f.ContentType = *a.ContentType
	}
	if a.FetchedAt != nil {
		f.Modified = *a.FetchedAt
	}
	return serveStored(c, f)
}
