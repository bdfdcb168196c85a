package server

import (
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/gen"
)

// deprecatedSince is when this server began announcing the deprecated request forms that
// deprecatedForm finds (RFC 9745's Deprecation date).
var deprecatedSince = time.Date(2026, time.November, 24, 0, 0, 0, 0, time.UTC)

// announceDeprecation is a strict-handler middleware: the response to a request that uses a
// deprecated form of a field carries `Deprecation: @<unix time>` (RFC 9745), as openapi.yaml
// declares. The request is served as before.
func announceDeprecation(next gen.StrictHandlerFunc, _ string) gen.StrictHandlerFunc {
	return func(c echo.Context, request any) (any, error) {
		if deprecatedForm(request) {
			c.Response().Header().Set("Deprecation", "@"+strconv.FormatInt(deprecatedSince.Unix(), 10))
		}
		return next(c, request)
	}
}

// deprecatedForm reports whether a request uses a deprecated form: the boolean
// settings.link_shortening, or a blast's contacts or segments.
func deprecatedForm(request any) bool {
	switch r := request.(type) {
	case gen.SendMessageRequestObject:
		return r.Body != nil && booleanLinkShortening(r.Body.Settings)
	case gen.CreateBlastRequestObject:
		return r.Body != nil && (booleanLinkShortening(r.Body.Settings) || r.Body.Contacts != nil || r.Body.Segments != nil)
	}
	return false
}

// booleanLinkShortening reports whether settings.link_shortening has its deprecated boolean form.
func booleanLinkShortening(s *gen.MessageSettings) bool {
	if s == nil || s.LinkShortening == nil {
		return false
	}
	_, err := s.LinkShortening.AsLinkShortening()
	return err != nil
}
