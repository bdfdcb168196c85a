package service

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard/switchboard/store"
)

// Attachment limits (decisions §7).
const (
	// MaxAttachments is the most attachments one message may carry.
	MaxAttachments = 10
	// MaxAttachmentBytes is the largest file fetched for an attachment.
	MaxAttachmentBytes = 5 << 20
	// AttachmentFetchTimeout bounds the fetch of one attachment.
	AttachmentFetchTimeout = 10 * time.Second
	// FileURLTTL is how long a signed file URL handed to an API client works.
	FileURLTTL = 5 * time.Minute
	// CarrierFileURLTTL is how long the signed URL handed to the carrier for MMS media works.
	CarrierFileURLTTL = 7 * 24 * time.Hour
)

// Attachment types.
const (
	AttachmentImage   = "image"
	AttachmentVideo   = "video"
	AttachmentContact = "contact"
	AttachmentFile    = "file"
)

// AttachmentType types a file by its media type: image/*, video/*, a vCard (contact), or file.
func AttachmentType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	switch {
	case strings.HasPrefix(mt, "image/"):
		return AttachmentImage
	case strings.HasPrefix(mt, "video/"):
		return AttachmentVideo
	case mt == "text/vcard", mt == "text/x-vcard", mt == "text/directory":
		return AttachmentContact
	}
	return AttachmentFile
}

// guessAttachmentType types an attachment by its URL's extension until the file is fetched.
func guessAttachmentType(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return AttachmentFile
	}
	ext := strings.ToLower(path.Ext(u.Path))
	if ext == ".vcf" || ext == ".vcard" {
		return AttachmentContact
	}
	return AttachmentType(mime.TypeByExtension(ext))
}

// errAttachment is a file that could not be fetched within the limits.
type errAttachment struct{ reason string }

func (e *errAttachment) Error() string { return "attachment unreachable: " + e.reason }

// fetchAttachment downloads one attachment within the limits and returns its media type and bytes.
// authorize, when not nil, adds a carrier's credentials to the request (see carriers.MediaSource).
func (m *Messages) fetchAttachment(ctx context.Context, rawURL string, authorize func(*http.Request)) (string, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, AttachmentFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return "", nil, &errAttachment{err.Error()}
	}
	if authorize != nil {
		authorize(req)
	}
	resp, err := m.cfg.HTTPClient.Do(req)
	if err != nil {
		return "", nil, &errAttachment{err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", nil, &errAttachment{"status " + strconv.Itoa(resp.StatusCode)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxAttachmentBytes+1))
	if err != nil {
		return "", nil, &errAttachment{err.Error()}
	}
	if len(data) > MaxAttachmentBytes {
		return "", nil, &errAttachment{"larger than 5 MiB"}
	}
	return StoredMediaType(resp.Header.Get("Content-Type"), data), data, nil
}

// octetStream is the media type of bytes whose type is unknown or not trusted.
const octetStream = "application/octet-stream"

// inlineImages are the raster image types a browser may show inline. SVG is not one of them: an
// SVG document runs script.
var inlineImages = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/avif": true, "image/bmp": true,
}

// InlineMediaType reports whether a stored file of contentType is inert enough for a browser to
// show inline on the API's origin: a raster image, audio, video or a PDF. It returns the bare
// media type (lower case, without parameters) to serve it as. Everything else (HTML, SVG, XML,
// scripts, style sheets, text, unknown types) is served as a download, never rendered.
func InlineMediaType(contentType string) (string, bool) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", false
	}
	kind, sub, _ := strings.Cut(mt, "/")
	switch {
	case strings.HasSuffix(sub, "+xml"):
		// Browsers render any */*+xml as an XML document, which can carry script.
		return "", false
	case kind == "image":
		return mt, inlineImages[mt]
	case kind == "audio", kind == "video", mt == "application/pdf":
		return mt, true
	}
	return "", false
}

// StoredMediaType is the media type to record for a fetched file: the type its server declared,
// normalized, or, when it declared none (or application/octet-stream), what its bytes look like,
// but only an inert type (InlineMediaType): bytes that look like HTML or XML are never recorded
// as such. A declared type that does not parse is recorded as application/octet-stream.
func StoredMediaType(declared string, data []byte) string {
	mt, params, err := mime.ParseMediaType(declared)
	if err != nil || mt == octetStream {
		if sniffed, ok := InlineMediaType(http.DetectContentType(data)); ok {
			return sniffed
		}
		return octetStream
	}
	if ct := mime.FormatMediaType(mt, params); ct != "" {
		return ct
	}
	return octetStream
}

// fileSigner signs the public file URLs (/files/{token}) with an installation secret kept in the
// database, so that any instance verifies what another signed.
type fileSigner struct {
	store  *store.Store
	mu     sync.Mutex
	secret []byte
}

func (f *fileSigner) key(ctx context.Context) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.secret == nil {
		s, err := f.store.InstallationSecret(ctx, "file_urls", 32)
		if err != nil {
			return nil, err
		}
		f.secret = s
	}
	return f.secret, nil
}

func (f *fileSigner) mac(key []byte, id string, exp int64) string {
	h := hmac.New(sha256.New, key)
	fmt.Fprintf(h, "%s.%d", id, exp)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// ErrBadFileToken answers a file URL that is malformed, forged or expired.
var ErrBadFileToken = &Error{Type: TypeNotFound, Message: "This file link is invalid or has expired."}

// FileURL returns a signed URL that serves the attachment's bytes until ttl has passed.
func (m *Messages) FileURL(ctx context.Context, attachmentID string, ttl time.Duration) (string, error) {
	key, err := m.signer.key(ctx)
	if err != nil {
		return "", err
	}
	exp := m.cfg.Now().Add(ttl).Unix()
	return fmt.Sprintf("%s/files/%s.%d.%s", m.cfg.PublicURL, attachmentID, exp, m.signer.mac(key, attachmentID, exp)), nil
}

// OpenFile checks a file token and returns the attachment it grants, with its bytes.
func (m *Messages) OpenFile(ctx context.Context, token string) (*store.Attachment, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, ErrBadFileToken
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || m.cfg.Now().Unix() > exp {
		return nil, ErrBadFileToken
	}
	key, err := m.signer.key(ctx)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal([]byte(parts[2]), []byte(m.signer.mac(key, parts[0], exp))) {
		return nil, ErrBadFileToken
	}
	a, err := m.cfg.Store.AttachmentFile(ctx, parts[0])
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.FetchedAt == nil) {
		return nil, ErrBadFileToken
	}
	return a, err
}

// AttachmentURL is the API's download URL of an attachment (it redirects to a signed URL).
func (m *Messages) AttachmentURL(id string) string {
	return m.cfg.PublicURL + "/attachments/" + id + "/file"
}

// AttachmentLocation returns where GET /attachments/{id}/file redirects: a short-lived signed URL
// of the stored file; for an outbound attachment not fetched yet (its message is not sent), the
// URL the customer gave. An inbound file that is not stored is not_found: the carrier's URL is
// never given out.
func (m *Messages) AttachmentLocation(ctx context.Context, projectID, id string) (string, error) {
	a, err := m.cfg.Store.GetAttachment(ctx, projectID, id)
	if err != nil {
		return "", err
	}
	switch {
	case a.FetchedAt != nil:
		return m.FileURL(ctx, a.ID, FileURLTTL)
	case a.UnavailableAt != nil:
		return "", Errorf(TypeNotFound, "attachment %s could not be fetched from the carrier", a.ID)
	}
	msg, err := m.cfg.Store.GetMessage(ctx, projectID, a.MessageID)
	if err != nil {
		return "", err
	}
	if msg.Direction == store.DirectionInbound {
		return "", Errorf(TypeNotFound, "attachment %s is still being fetched from the carrier; try again shortly", a.ID)
	}
	return a.URL, nil
}

// AttachmentStatus is an attachment's status as the API shows it: pending, available or unavailable.
func AttachmentStatus(a *store.Attachment) string {
	switch {
	case a.FetchedAt != nil:
		return "available"
	case a.UnavailableAt != nil:
		return "unavailable"
	}
	return "pending"
}
