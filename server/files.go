package server

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/service"
)

// storedFile is a file kept for a client (an attachment, a recording), served from a signed URL
// on the API's own origin.
type storedFile struct {
	// Name is the file name offered to a browser that saves it.
	Name string
	// ContentType is the media type recorded with the file; it decides how the file is served.
	ContentType string
	// Modified is the file's Last-Modified time; zero leaves the header out.
	Modified time.Time
	Data     []byte
}

// fileCSP is the Content-Security-Policy of every stored file: nothing loads, nothing runs, and
// the document is sandboxed into a unique origin, whatever a browser makes of the bytes.
const fileCSP = "default-src 'none'; sandbox"

// downloadTypes are media types that are not inert (InlineMediaType) but keep their type when
// served as a download: a vCard must reach an MMS carrier as text/vcard to arrive as a contact
// card. Served as attachment, with nosniff and fileCSP, no browser renders it as a document.
var downloadTypes = map[string]bool{"text/vcard": true, "text/x-vcard": true, "text/directory": true}

// serveStored serves a stored file so that it cannot run on the API's origin whatever its
// bytes are: nosniff, a sandboxing CSP, inline only for inert types (raster images, audio,
// video, PDF) and otherwise a download as application/octet-stream. http.ServeContent answers
// Range (206) and conditional (304) requests and HEAD; its refusals (416, 412) leave in the
// error envelope.
func serveStored(c echo.Context, f storedFile) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "private, max-age=300")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", fileCSP)
	name := strings.Map(func(r rune) rune {
		if r <= ' ' || r >= 0x7f || r == '"' || r == '\\' || r == ';' {
			return '_'
		}
		return r
	}, f.Name)
	// A stored file never changes under its name (an id): the name is a strong validator, so
	// that If-None-Match (304) and If-Match (412) work.
	h.Set("Etag", `"`+name+`"`)
	if mt, ok := service.InlineMediaType(f.ContentType); ok {
		h.Set(echo.HeaderContentType, mt)
		h.Set(echo.HeaderContentDisposition, mime.FormatMediaType("inline", map[string]string{"filename": name}))
	} else {
		ct := "application/octet-stream"
		if mt, _, err := mime.ParseMediaType(f.ContentType); err == nil && downloadTypes[mt] {
			ct = mt
		}
		h.Set(echo.HeaderContentType, ct)
		h.Set(echo.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	}
	w := &refusalCatcher{ResponseWriter: c.Response()}
	http.ServeContent(w, c.Request(), name, f.Modified, bytes.NewReader(f.Data))
	switch w.refused {
	case 0:
		return nil
	case http.StatusRequestedRangeNotSatisfiable:
		return service.Errorf("range_not_satisfiable", "The Range header asks for no byte of the %d the file has.", len(f.Data))
	case http.StatusPreconditionFailed:
		return service.Errorf("precondition_failed", "The file does not match the request's If-Match or If-Unmodified-Since header.")
	}
	return fmt.Errorf("server: serve file %s: status %d", f.Name, w.refused)
}

// refusalCatcher stands in for the response while a net/http handler runs (http.ServeContent, a
// carrier's callbacks): it holds back an error status and its plain-text body, so that the
// refusal leaves in the error envelope instead.
type refusalCatcher struct {
	http.ResponseWriter
	refused int
	// text is the start of the refusal's body.
	text []byte
}

func (u *refusalCatcher) WriteHeader(status int) {
	if status >= http.StatusBadRequest {
		u.refused = status
		return
	}
	u.ResponseWriter.WriteHeader(status)
}

func (u *refusalCatcher) Write(b []byte) (int, error) {
	if u.refused != 0 {
		if room := 200 - len(u.text); room > 0 {
			u.text = append(u.text, b[:min(room, len(b))]...)
		}
		return len(b), nil
	}
	return u.ResponseWriter.Write(b)
}
