package server

import (
	"context"
	"net/http"

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
	ct := "application/octet-stream"
	if a.ContentType != nil && *a.ContentType != "" {
		ct = *a.ContentType
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "private, max-age=300")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Disposition", "inline")
	return c.Blob(http.StatusOK, ct, a.Data)
}
