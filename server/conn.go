package server

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/switchboard/switchboard/store"
)

// envelopeListener hands net/http connections on which every answer is in the error envelope,
// including the few that net/http writes itself before any handler runs: a request header over
// the limit (431), a request that is not HTTP/1.x (400, 501, 505), an Expect it cannot meet
// (417). With tls set it also terminates TLS, so that those answers are seen in plain text, and
// answers plain HTTP sent to the TLS port with 403 https_required.
type envelopeListener struct {
	net.Listener
	// tls, when set, is the TLS configuration: the listener terminates TLS itself.
	tls *tls.Config
	// maxHeader is the server's MaxHeaderBytes, quoted in the 431's message.
	maxHeader int
}

// Accept wraps the next connection. The TLS handshake happens later, in the connection's own
// goroutine (see tlsEnvelopeConn), so that a slow client cannot hold up the accept loop.
func (l *envelopeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if l.tls == nil {
		return &envelopeConn{Conn: c, maxHeader: l.maxHeader}, nil
	}
	return &tlsEnvelopeConn{envelopeConn: envelopeConn{Conn: tls.Server(c, l.tls), maxHeader: l.maxHeader}}, nil
}

// envelopeConn is a server connection whose writes are watched for net/http's own error
// answers, each replaced by the same refusal in the envelope.
type envelopeConn struct {
	net.Conn
	maxHeader int
}

func (c *envelopeConn) Write(b []byte) (int, error) {
	if env := c.envelopeFor(b); env != nil {
		if _, err := c.Conn.Write(env); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// CloseWrite lets net/http half-close a connection after its 431 (closeWriteAndWait), so that the
// client reads the answer before the connection goes.
func (c *envelopeConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// netHTTPErrorHeaders are the header fields of every answer net/http writes itself on a request
// it could not read (net/http.(*conn).serve): its answer is one write of "HTTP/1.1 {code}
// {reason}" + these + a plain-text body. A handler's answer never has this form: net/http adds a
// Date field to each.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// maxNetHTTPError bounds the length of net/http's own answers (a status line, two header fields
// and a one-line body; its 417 is a status line and three short fields).
const maxNetHTTPError = 1024

// expectationFailed starts net/http's answer to an Expect other than 100-continue, which no
// handler of this server gives.
const expectationFailed = "HTTP/1.1 417 "

// envelopeFor returns the envelope answer that replaces b when b is one of net/http's own error
// answers, and nil otherwise.
func (c *envelopeConn) envelopeFor(b []byte) []byte {
	// net/http's own answers are one short write each; anything longer is a handler's.
	if len(b) > maxNetHTTPError || !bytes.HasPrefix(b, []byte("HTTP/1.1 ")) {
		return nil
	}
	if bytes.HasPrefix(b, []byte(expectationFailed)) {
		return envelopeResponse(http.StatusExpectationFailed, "expectation_failed",
			"The Expect header asks for something this server does not do; only 100-continue is supported.")
	}
	statusLine, body, ok := bytes.Cut(b, []byte(netHTTPErrorHeaders))
	if !ok || len(statusLine) < 12 || bytes.ContainsAny(body, "\r\n") {
		return nil
	}
	code, err := strconv.Atoi(string(statusLine[9:12]))
	if err != nil {
		return nil
	}
	switch code {
	case http.StatusRequestHeaderFieldsTooLarge:
		return envelopeResponse(code, "request_header_too_large",
			fmt.Sprintf("The request's header is larger than this server accepts (%d bytes).", c.maxHeader))
	case http.StatusNotImplemented:
		return envelopeResponse(code, "unsupported_transfer_encoding",
			"The request's Transfer-Encoding is not supported: send a Content-Length, or chunked.")
	case http.StatusHTTPVersionNotSupported:
		return envelopeResponse(code, "http_version_not_supported", "This server speaks HTTP/1.1 (and 1.0).")
	case http.StatusBadRequest:
		msg := "The request is not valid HTTP/1.1"
		// net/http says what was wrong after the reason: "400 Bad Request: missing required Host header".
		if _, detail, ok := bytes.Cut(body, []byte(": ")); ok && len(detail) < 200 {
			msg += ": " + string(detail)
		}
		return envelopeResponse(code, "invalid_request", msg+".")
	}
	return nil
}

// envelopeResponse is a complete HTTP/1.1 answer in the error envelope that closes the
// connection, for the answers written below the handlers.
func envelopeResponse(status int, typ, message string) []byte {
	body, _ := json.Marshal(errorBody{Error: errorObject{Type: typ, Message: message}})
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	fmt.Fprintf(&b, "X-Request-Id: %s\r\nX-Content-Type-Options: nosniff\r\n", store.NewID("req"))
	fmt.Fprintf(&b, "Date: %s\r\nConnection: close\r\n\r\n", time.Now().UTC().Format(http.TimeFormat))
	b.Write(body)
	return b.Bytes()
}

// tlsEnvelopeConn is an envelopeConn over TLS. It completes the handshake before anything else
// (net/http asks for ConnectionState first, to fill Request.TLS), and answers a client that
// speaks plain HTTP to the TLS port with 403 https_required, in plain text.
type tlsEnvelopeConn struct {
	envelopeConn
	once sync.Once
	err  error
}

func (c *tlsEnvelopeConn) handshake() error {
	c.once.Do(func() {
		tc := c.Conn.(*tls.Conn)
		_ = tc.SetDeadline(time.Now().Add(handshakeTimeout))
		c.err = tc.Handshake()
		_ = tc.SetDeadline(time.Time{})
		var rh tls.RecordHeaderError
		if errors.As(c.err, &rh) && rh.Conn != nil && looksLikeHTTP(rh.RecordHeader) {
			_ = rh.Conn.SetWriteDeadline(time.Now().Add(handshakeTimeout))
			_, _ = rh.Conn.Write(envelopeResponse(http.StatusForbidden, "https_required", httpsRequired))
		}
	})
	return c.err
}

func (c *tlsEnvelopeConn) Read(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *tlsEnvelopeConn) Write(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.envelopeConn.Write(b)
}

// ConnectionState makes net/http fill Request.TLS, as it does for a *tls.Conn.
func (c *tlsEnvelopeConn) ConnectionState() tls.ConnectionState {
	_ = c.handshake()
	return c.Conn.(*tls.Conn).ConnectionState()
}

// looksLikeHTTP reports whether a TLS record header is the start of a plain HTTP request, as
// net/http judges it.
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "DELET", "PATCH", "CONNE", "TRACE":
		return true
	}
	return false
}
