package server

import (
	"bytes"
	"embed"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/gen"
)

// docsFiles are the rendered API reference: a page and Redoc's standalone bundle (v3.0.1, MIT,
// see docs/REDOC-LICENSE), served from the binary so that the reference needs no CDN.
//
//go:embed docs/index.html docs/redoc.standalone.js
var docsFiles embed.FS

// docsCSP lets the page run Redoc's bundle and nothing from elsewhere: Redoc styles with inline
// styles, renders the spec in a worker made from a blob, and shows data: images.
const docsCSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
	"worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'"

// mountDocs serves the API reference of the embedded openapi.yaml at /docs: public routes
// outside the contract, like the signed file URLs.
func (s *Server) mountDocs(e *echo.Echo) error {
	spec, err := gen.GetSwagger()
	if err != nil {
		return err
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	page, err := docsFiles.ReadFile("docs/index.html")
	if err != nil {
		return err
	}
	bundle, err := docsFiles.ReadFile("docs/redoc.standalone.js")
	if err != nil {
		return err
	}
	started := time.Now()
	serve := func(name, contentType, cache string, body []byte) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set(echo.HeaderContentType, contentType)
			h.Set("Cache-Control", cache)
			h.Set("Content-Security-Policy", docsCSP)
			h.Set("X-Content-Type-Options", "nosniff")
			http.ServeContent(c.Response(), c.Request(), name, started, bytes.NewReader(body))
			return nil
		}
	}
	index := serve("index.html", "text/html; charset=utf-8", "no-cache", page)
	e.GET("/docs", index)
	e.GET("/docs/", index)
	e.GET("/docs/openapi.json", serve("openapi.json", "application/json", "no-cache", specJSON))
	e.GET("/docs/redoc.standalone.js", serve("redoc.standalone.js", "text/javascript; charset=utf-8", "public, max-age=86400", bundle))
	return nil
}
