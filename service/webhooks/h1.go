package webhooks

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// h1Client sends the attempts to plain http:// endpoints over HTTP/1.1 keep-alive connections of
// its own, when the deliverer uses its default client (NewClient; a Config.Client is used as it
// is). The attempt's goroutine writes the request in one write and reads the answer itself, where
// net/http's Transport hands each request to the connection's writer goroutine and the answer back
// from its reader goroutine, through channels and selects, and builds the request's header map and
// its copies: in an e2e run the HTTP client was about half of the deliverer's CPU outside its write
// and read system calls. What the endpoint gets is what net/http sends, byte for byte (a spec
// compares them): the same request line, Host, User-Agent, Content-Length, the headers in
// net/http's order and its Accept-Encoding: gzip; the answer is read by net/http (ReadResponse:
// Content-Length, chunked, bodies to the connection's close, informational answers skipped as the
// Transport skips them, a gzipped body decompressed for the failure's message). A connection goes
// back to the idle pool only after its answer's body was read to the end within the same 64 KiB,
// and is taken again only while the peer has not closed it (a peek at the socket, where the
// Transport's reader goroutine notices the close while the connection is idle); a request whose
// write fails on a reused connection before any byte left is sent again on a new one, as the
// Transport does. HTTPS endpoints, URLs with credentials and anything else out of the ordinary go
// through net/http (HTTP/2 where the endpoint offers it).
type h1Client struct {
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu      sync.Mutex
	idle    map[string][]*h1Conn // by address, the most recently used last
	nidle   int
	janitor *time.Timer
	targets map[string]*h1Target // endpoint URLs parsed, nil for those net/http sends
	// watched is the Done channel of the context watch was given: the attempts made under it
	// (every attempt of the deliverer) keep their connections in the list that starts at busy,
	// which abortBusy cuts short when it ends, where any other attempt registers a function of
	// its own with context.AfterFunc (which took a lock of the deliverer's context and two
	// allocations an attempt).
	watched <-chan struct{}
	busy    *h1Conn
}

// The idle pool's bounds, as NewClient's Transport has them.
const (
	h1MaxIdle        = 512
	h1MaxIdlePerHost = 128
	h1IdleTimeout    = 90 * time.Second
	// h1TargetsSize bounds the parsed URLs kept; past it, the cache starts again empty.
	h1TargetsSize = 4096
	// h1Max1xx is how many informational answers an attempt skips (the Transport's bound).
	h1Max1xx = 5
)

func newH1Client(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *h1Client {
	return &h1Client{dial: dial, idle: map[string][]*h1Conn{}, targets: map[string]*h1Target{}}
}

// h1Target is an endpoint URL as h1Client sends to it.
type h1Target struct {
	addr string // host:port dialled
	host string // the Host header
	uri  string // the request target
	url  string // the URL as net/http's errors name it
}

// target returns how the client sends to raw; nil when net/http sends to it (https, credentials
// in the URL, a host that is not plain ASCII, …).
func (c *h1Client) target(raw string) *h1Target {
	c.mu.Lock()
	t, ok := c.targets[raw]
	c.mu.Unlock()
	if ok {
		return t
	}
	t = parseH1Target(raw)
	c.mu.Lock()
	if len(c.targets) >= h1TargetsSize {
		c.targets = map[string]*h1Target{}
	}
	c.targets[raw] = t
	c.mu.Unlock()
	return t
}

// parseH1Target is target's parse: what http.NewRequest and the Transport make of raw, for the
// URLs whose handling here is plainly theirs.
func parseH1Target(raw string) *h1Target {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.User != nil || u.Opaque != "" || u.Host == "" ||
		strings.HasSuffix(u.Host, ":") || !plainHeaderValue(u.Host) || strings.ContainsAny(u.Host, "% ") {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	uri := u.RequestURI()
	if uri == "" || !plainHeaderValue(uri) || strings.Contains(uri, " ") {
		return nil
	}
	return &h1Target{addr: net.JoinHostPort(u.Hostname(), port), host: u.Host, uri: uri, url: u.String()}
}

// plainHeaderValue reports whether net/http writes s as it is in a header value: printable ASCII
// (spaces inside), nothing to trim at either end.
func plainHeaderValue(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// h1Request is an attempt's request: its headers besides Host, User-Agent and Content-Length,
// in canonical form, and its body.
type h1Request struct {
	headers [10]h1Header
	n       int
	bad     bool // a header net/http would not write as it is
	body    []byte
}

type h1Header struct{ key, value string }

// Set adds a header (kit.InjectTraceparent sets the trace's); a value net/http would not write
// as it is makes the attempt go through net/http.
func (r *h1Request) Set(key, value string) { r.add(http.CanonicalHeaderKey(key), value) }

// add adds a header by its canonical name.
func (r *h1Request) add(key, value string) {
	if r.n == len(r.headers) || !plainHeaderValue(value) {
		r.bad = true
		return
	}
	r.headers[r.n] = h1Header{key, value}
	r.n++
}

// appendTo appends the request as net/http's Transport writes it: the request line, Host,
// User-Agent, Content-Length, the other headers sorted by name, Accept-Encoding: gzip (the
// Transport's, which decompresses the answer), a blank line and the body.
func (r *h1Request) appendTo(b []byte, t *h1Target) []byte {
	hs := r.headers[:r.n]
	for i := 1; i < len(hs); i++ { // insertion sort: a handful of headers
		for j := i; j > 0 && hs[j].key < hs[j-1].key; j-- {
			hs[j], hs[j-1] = hs[j-1], hs[j]
		}
	}
	b = append(append(append(b, "POST "...), t.uri...), " HTTP/1.1\r\nHost: "...)
	b = append(append(append(b, t.host...), "\r\nUser-Agent: "...), UserAgent...)
	b = strconv.AppendInt(append(b, "\r\nContent-Length: "...), int64(len(r.body)), 10)
	b = append(b, "\r\n"...)
	for _, h := range hs {
		b = append(append(append(append(b, h.key...), ": "...), h.value...), "\r\n"...)
	}
	b = append(b, "Accept-Encoding: gzip\r\n\r\n"...)
	return append(b, r.body...)
}

// h1MaxAnswer is the most an answer may take on the connection before its body, as the
// Transport's default MaxResponseHeaderBytes; the body is read up to 64 KiB past its start.
const h1MaxAnswer = 10<<20 + 64<<10 + 4096

// errH1AnswerTooLong is the error of an answer longer than h1MaxAnswer (net/http's words).
var errH1AnswerTooLong = errors.New("net/http: server response headers exceeded 10485760 bytes; aborted")

// cappedReader reads the connection for its bufio.Reader, up to left bytes an answer.
type cappedReader struct {
	r    io.Reader
	left int
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errH1AnswerTooLong
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= n
	return n, err
}

// h1Conn is a connection of the pool.
type h1Conn struct {
	net.Conn
	addr string
	// prev and next link the connection in the client's busy list while tracked: while its
	// attempt's context is the watched one (watched is its Done channel).
	prev, next *h1Conn
	watched    <-chan struct{}
	in         cappedReader
	br         *bufio.Reader
	wbuf       []byte
	idle       time.Time // when it went back to the pool
	// scratch takes the bodies of answers.
	scratch [2048]byte
	// peek looks at the socket for peerOpen (made once per connection).
	peek *socketPeek
}

// errH1Aborted is the error of an attempt whose context ended while it waited on the endpoint.
var errH1Aborted = errors.New("webhooks: the attempt was abandoned")

// post sends the request to t and reads the answer by deadline (or until ctx ends): the status
// and up to 256 bytes of the body (decompressed when gzipped), as attempt reads them from net/http.
// Its errors are net/http's *url.Error.
func (c *h1Client) post(ctx context.Context, t *h1Target, deadline time.Time, r *h1Request) (int, []byte, error) {
	status, snippet, err := c.do(ctx, t, deadline, r)
	if err != nil {
		return 0, nil, &url.Error{Op: "Post", URL: t.url, Err: err}
	}
	return status, snippet, nil
}

func (c *h1Client) do(ctx context.Context, t *h1Target, deadline time.Time, r *h1Request) (int, []byte, error) {
	for first := true; ; first = false {
		pc, reused, err := c.get(ctx, t, deadline)
		if err != nil {
			return 0, nil, err
		}
		_ = pc.SetDeadline(deadline)
		// The end of ctx cuts the connection's deadline short: through the busy list (abortBusy)
		// when tracked, or a function of its own.
		var stop func() bool
		if pc.watched == nil {
			stop = context.AfterFunc(ctx, func() { _ = pc.SetDeadline(abortedDeadline) })
		} else if ctx.Err() != nil { // abortBusy ran before the connection was in the list
			_ = pc.SetDeadline(abortedDeadline)
		}
		// aborted reports whether ctx ended the attempt (its deadline was cut, or may be).
		aborted := func() bool {
			if stop != nil {
				return !stop()
			}
			return ctx.Err() != nil
		}
		pc.wbuf = r.appendTo(pc.wbuf[:0], t)
		pc.in.left = h1MaxAnswer
		n, err := pc.write(ctx, deadline)
		if err != nil {
			aborted()
			c.drop(pc)
			if reused && n == 0 && first && ctx.Err() == nil {
				continue // the peer closed it meanwhile; nothing of the request left
			}
			return 0, nil, err
		}
		status, snippet, keep, err := pc.answer()
		if aborted() {
			keep = false
			if err != nil {
				err = errH1Aborted
			}
		}
		if err != nil || !keep {
			c.drop(pc)
		} else {
			c.put(pc)
		}
		return status, snippet, err
	}
}

// abortedDeadline is the deadline that cuts an attempt short: long past.
var abortedDeadline = time.Unix(1, 0)

// watch makes the end of ctx cut short every attempt made under it (or under a context with its
// Done channel), through the client's busy list: the deliverer's context. A later watch takes
// its place (the attempts under the earlier context register functions of their own).
func (c *h1Client) watch(ctx context.Context) {
	done := ctx.Done()
	c.mu.Lock()
	c.watched = done
	c.mu.Unlock()
	context.AfterFunc(ctx, func() { c.abortBusy(done) })
}

// abortBusy cuts short the attempts on the connections of the busy list made under the context
// whose Done channel is done.
func (c *h1Client) abortBusy(done <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for pc := c.busy; pc != nil; pc = pc.next {
		if pc.watched == done {
			_ = pc.SetDeadline(abortedDeadline)
		}
	}
}

// track puts pc in the busy list when ctx is the watched context's. Called with c.mu held.
func (c *h1Client) track(ctx context.Context, pc *h1Conn) {
	if done := ctx.Done(); done == nil || done != c.watched {
		return
	}
	pc.watched, pc.prev, pc.next = c.watched, nil, c.busy
	if c.busy != nil {
		c.busy.prev = pc
	}
	c.busy = pc
}

// untrack takes pc out of the busy list, if it is there. Called with c.mu held.
func (c *h1Client) untrack(pc *h1Conn) {
	if pc.watched == nil {
		return
	}
	if pc.prev != nil {
		pc.prev.next = pc.next
	} else {
		c.busy = pc.next
	}
	if pc.next != nil {
		pc.next.prev = pc.prev
	}
	pc.watched, pc.prev, pc.next = nil, nil, nil
}

// drop closes pc, which leaves the busy list.
func (c *h1Client) drop(pc *h1Conn) {
	if pc.watched != nil {
		c.mu.Lock()
		c.untrack(pc)
		c.mu.Unlock()
	}
	_ = pc.Close()
}

// write writes the request in pc.wbuf, and waits for its answer when it can (socketPeek.send):
// not once ctx has ended or deadline has passed, where the connection's Write fails at once as
// before, without a byte sent.
func (pc *h1Conn) write(ctx context.Context, deadline time.Time) (int, error) {
	if ctx.Err() != nil || !time.Now().Before(deadline) {
		return pc.Write(pc.wbuf)
	}
	n, err, handled := pc.peek.send(pc.Conn, pc.wbuf)
	if !handled {
		return pc.Write(pc.wbuf)
	}
	if err != nil || n == len(pc.wbuf) {
		return n, err
	}
	m, err := pc.Write(pc.wbuf[n:])
	return n + m, err
}

// answer reads the answer to the request just written: its status, the start of its body, and
// whether the connection may carry another request.
func (pc *h1Conn) answer() (status int, snippet []byte, keep bool, err error) {
	if status, snippet, keep, err, ok := pc.plainAnswer(); ok {
		return status, snippet, keep, err
	}
	return pc.readAnswer()
}

// readAnswer is answer by net/http's ReadResponse, for any answer.
func (pc *h1Conn) readAnswer() (status int, snippet []byte, keep bool, err error) {
	var resp *http.Response
	for n := 0; ; n++ {
		if resp, err = http.ReadResponse(pc.br, nil); err != nil {
			return 0, nil, false, err
		}
		if resp.StatusCode < 100 || resp.StatusCode > 199 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		if n == h1Max1xx {
			return 0, nil, false, errors.New("net/http: too many 1xx informational responses")
		}
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return resp.StatusCode, nil, false, nil // the connection is no longer HTTP's
	}
	body := resp.Body
	var text io.Reader = body
	if strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		text = &lazyGzip{r: body}
	}
	// The body's first 256 bytes (copied: the buffer stays with the connection), then up to
	// 64 KiB more, read into the connection's buffer.
	n := readUpTo(text, pc.scratch[:256])
	if n > 0 {
		snippet = append([]byte(nil), pc.scratch[:n]...)
	}
	for left := 64 << 10; left > 0; {
		m := readUpTo(text, pc.scratch[:min(left, len(pc.scratch))])
		if m == 0 {
			break
		}
		left -= m
	}
	m, end := body.Read(pc.scratch[:1])
	keep = m == 0 && end == io.EOF && !resp.Close
	return resp.StatusCode, snippet, keep, nil
}

// plainAnswer reads the common answer without http.ReadResponse (its header map, strings and
// body reader were about 6 of an attempt's allocations): a 2xx of HTTP/1.1 whose headers and body
// have all arrived, with no Transfer-Encoding, Connection or Content-Encoding, at most one
// Content-Length (which a 204 ignores, as net/http does), and nothing out of the plainest header
// syntax. It returns what answer returns, with ok true, when the answer is one; ok false when it
// is not, having consumed nothing, and answer reads it with net/http. An error of the first read
// is returned as ReadResponse returns it.
func (pc *h1Conn) plainAnswer() (status int, snippet []byte, keep bool, err error, ok bool) {
	br := pc.br
	if br.Buffered() == 0 {
		if _, err := br.Peek(1); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, nil, false, err, true
		}
	}
	buf, _ := br.Peek(br.Buffered())
	const proto = "HTTP/1.1 2"
	if len(buf) < len(proto)+3 || string(buf[:len(proto)]) != proto {
		return 0, nil, false, nil, false
	}
	d1, d2 := buf[len(proto)], buf[len(proto)+1]
	if d1 < '0' || d1 > '9' || d2 < '0' || d2 > '9' {
		return 0, nil, false, nil, false
	}
	status = 200 + int(d1-'0')*10 + int(d2-'0')
	// The status line ends after the code or after a space and the reason; then come the header
	// lines, up to a blank one.
	at := len(proto) + 2
	if buf[at] == ' ' {
		at++
	}
	end, ok := plainLineEnd(buf, at)
	if !ok || end != at && buf[len(proto)+2] != ' ' {
		return 0, nil, false, nil, false
	}
	contentLength := -1
	for {
		at = end + 2
		if end, ok = plainLineEnd(buf, at); !ok {
			return 0, nil, false, nil, false
		}
		if end == at {
			break // the blank line
		}
		name, value, found := bytes.Cut(buf[at:end], []byte(":"))
		if !found || !plainHeaderName(name) {
			return 0, nil, false, nil, false
		}
		value = bytes.Trim(value, " \t")
		switch {
		case asciiEqualFold(name, "Content-Length"):
			if contentLength >= 0 || len(value) == 0 || len(value) > 9 {
				return 0, nil, false, nil, false
			}
			contentLength = 0
			for _, c := range value {
				if c < '0' || c > '9' {
					return 0, nil, false, nil, false
				}
				contentLength = contentLength*10 + int(c-'0')
			}
		case asciiEqualFold(name, "Transfer-Encoding"), asciiEqualFold(name, "Connection"),
			asciiEqualFold(name, "Content-Encoding"):
			return 0, nil, false, nil, false
		}
	}
	line := end + 2 // the body's start
	body := 0
	switch {
	case status == http.StatusNoContent:
	case contentLength < 0:
		return 0, nil, false, nil, false // a body to the connection's close
	default:
		body = contentLength
	}
	if len(buf)-line < body {
		return 0, nil, false, nil, false // the body has not all arrived
	}
	if n := min(body, 256); n > 0 {
		snippet = append([]byte(nil), buf[line:line+n]...)
	}
	_, _ = br.Discard(line + body)
	return status, snippet, true, nil, true
}

// plainHeaderName reports whether b is a header name of letters, digits and hyphens, which
// net/http reads as it is (its canonical form aside).
func plainHeaderName(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// asciiEqualFold reports whether the header name b (plainHeaderName) is s but for the case of
// its letters.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if b[i]|0x20 != s[i]|0x20 {
			return false
		}
	}
	return true
}

// plainLineEnd returns where the line that starts at buf[at] ends (its CR LF), ok false when
// buf holds no CR LF from there or the line has a byte besides tab and printable ASCII.
func plainLineEnd(buf []byte, at int) (int, bool) {
	for i := at; i < len(buf); i++ {
		switch c := buf[i]; {
		case c == '\r':
			return i, i+1 < len(buf) && buf[i+1] == '\n'
		case c < 0x20 && c != '\t' || c > 0x7e:
			return i, false
		}
	}
	return len(buf), false
}

// readUpTo reads into buf until it is full or r has nothing more (at its end, or an error), and
// returns how much it read.
func readUpTo(r io.Reader, buf []byte) int {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil || m == 0 {
			break
		}
	}
	return n
}

// lazyGzip decompresses r from its first read, as the Transport's gzip reader does.
type lazyGzip struct {
	r   io.Reader
	z   *gzip.Reader
	err error
}

func (g *lazyGzip) Read(p []byte) (int, error) {
	if g.z == nil && g.err == nil {
		g.z, g.err = gzip.NewReader(g.r)
	}
	if g.err != nil {
		return 0, g.err
	}
	return g.z.Read(p)
}

// get returns an idle connection to t that the peer has not closed, or a new one (reused says
// which), in the busy list when ctx is the watched context's (track).
func (c *h1Client) get(ctx context.Context, t *h1Target, deadline time.Time) (pc *h1Conn, reused bool, err error) {
	now := time.Now()
	c.mu.Lock()
	for list := c.idle[t.addr]; len(list) > 0; list = c.idle[t.addr] {
		pc = list[len(list)-1]
		list[len(list)-1] = nil
		c.idle[t.addr] = list[:len(list)-1]
		c.nidle--
		c.track(ctx, pc)
		c.mu.Unlock()
		if now.Sub(pc.idle) < h1IdleTimeout && pc.br.Buffered() == 0 && pc.peek.open() {
			return pc, true, nil
		}
		c.drop(pc)
		c.mu.Lock()
	}
	c.mu.Unlock()
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	conn, err := c.dial(dctx, "tcp", t.addr)
	if err != nil {
		return nil, false, err
	}
	pc = &h1Conn{Conn: conn, addr: t.addr, in: cappedReader{r: conn}, peek: newSocketPeek(conn)}
	pc.br = bufio.NewReaderSize(&pc.in, 4096)
	c.mu.Lock()
	c.track(ctx, pc)
	c.mu.Unlock()
	return pc, false, nil
}

// put gives pc back to the idle pool (or closes it when the pool is full); it leaves the busy
// list.
func (c *h1Client) put(pc *h1Conn) {
	pc.idle = time.Now()
	c.mu.Lock()
	c.untrack(pc)
	if c.nidle >= h1MaxIdle || len(c.idle[pc.addr]) >= h1MaxIdlePerHost {
		c.mu.Unlock()
		_ = pc.Close()
		return
	}
	c.idle[pc.addr] = append(c.idle[pc.addr], pc)
	c.nidle++
	if c.janitor == nil {
		c.janitor = time.AfterFunc(h1IdleTimeout, c.sweep)
	}
	c.mu.Unlock()
}

// sweep closes the connections idle for h1IdleTimeout; it runs again while any stay idle.
func (c *h1Client) sweep() {
	now := time.Now()
	var stale []*h1Conn
	c.mu.Lock()
	for addr, list := range c.idle {
		kept := list[:0]
		for _, pc := range list {
			if now.Sub(pc.idle) >= h1IdleTimeout {
				stale = append(stale, pc)
			} else {
				kept = append(kept, pc)
			}
		}
		clear(list[len(kept):])
		if len(kept) == 0 {
			delete(c.idle, addr)
		} else {
			c.idle[addr] = kept
		}
	}
	c.nidle -= len(stale)
	if c.nidle > 0 {
		c.janitor.Reset(h1IdleTimeout / 3)
	} else {
		c.janitor = nil
	}
	c.mu.Unlock()
	for _, pc := range stale {
		_ = pc.Close()
	}
}

// closeIdle closes every idle connection.
func (c *h1Client) closeIdle() {
	c.mu.Lock()
	idle := c.idle
	c.idle, c.nidle = map[string][]*h1Conn{}, 0
	c.mu.Unlock()
	for _, list := range idle {
		for _, pc := range list {
			_ = pc.Close()
		}
	}
}
