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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// rawEndpoint is a loopback endpoint that records each request's bytes as they arrived and answers
// with whatever answer returns for the n-th request (from 0), written as it is; close says whether
// it then closes the connection.
type rawEndpoint struct {
	ln       net.Listener
	mu       sync.Mutex
	requests [][]byte
	conns    atomic.Int32
	answer   func(n int) (raw string, close bool)
}

func newRawEndpoint(answer func(n int) (string, bool)) *rawEndpoint {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	e := &rawEndpoint{ln: ln, answer: answer}
	DeferCleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.conns.Add(1)
			go e.serve(c)
		}
	}()
	return e
}

func (e *rawEndpoint) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		var rec bytes.Buffer
		req, err := http.ReadRequest(bufio.NewReader(io.TeeReader(br, &rec)))
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		e.mu.Lock()
		n := len(e.requests)
		e.requests = append(e.requests, rec.Bytes())
		e.mu.Unlock()
		raw, closeIt := e.answer(n)
		if raw != "" {
			_, _ = io.WriteString(c, raw)
		}
		if closeIt {
			return
		}
	}
}

func (e *rawEndpoint) url(path string) string { return "http://" + e.ln.Addr().String() + path }

func (e *rawEndpoint) request(n int) []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.requests[n]
}

// These specs drive the deliverer's own HTTP/1.1 client against endpoints that answer as raw bytes
// say; the specs in webhooks_test.go deliver through it to a net/http server.
var _ = Describe("The deliveries' HTTP/1.1 client", func() {
	var (
		c   *h1Client
		ctx context.Context
	)
	BeforeEach(func() {
		ctx = context.Background()
		c = newH1Client(newDialer(true).DialContext)
		DeferCleanup(c.closeIdle)
	})
	request := func(body string) *h1Request {
		r := &h1Request{body: []byte(body)}
		r.add("Content-Type", "application/json")
		r.add("Webhook-Id", "evt_01")
		r.add("Webhook-Timestamp", "1764045000")
		r.add("Webhook-Signature", "v1,abc= v1,def=")
		r.add("Svc-Signature", "t=1764045000,v1=00ff")
		r.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		return r
	}
	post := func(rawURL string, body string) (int, string, error) {
		t := c.target(rawURL)
		Expect(t).NotTo(BeNil())
		status, snippet, err := c.post(ctx, t, time.Now().Add(5*time.Second), request(body))
		return status, string(snippet), err
	}
	const noContent = "HTTP/1.1 204 No Content\r\nDate: Wed, 25 Nov 2026 07:00:00 GMT\r\n\r\n"

	It("writes the request net/http writes, byte for byte", func() {
		e := newRawEndpoint(func(int) (string, bool) { return noContent, false })
		u := e.url("/hooks/in?token=a%20b&x=1")
		body := `{"account_id":"acct_1","type":"message.delivered","timestamp":"2026-11-25T07:00:00Z","data":{}}`
		req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		h := req.Header
		h.Set("Content-Type", "application/json")
		h.Set("User-Agent", UserAgent)
		h.Set("webhook-id", "evt_01")
		h.Set("webhook-timestamp", "1764045000")
		h.Set("webhook-signature", "v1,abc= v1,def=")
		h.Set("svc-signature", "t=1764045000,v1=00ff")
		h.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		client := NewClient(true, 5*time.Second)
		resp, err := client.Do(req)
		Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		client.CloseIdleConnections()

		status, _, err := post(u, body)
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(204))
		Expect(string(e.request(1))).To(Equal(string(e.request(0))))
		Expect(string(e.request(1))).To(HavePrefix("POST /hooks/in?token=a%20b&x=1 HTTP/1.1\r\nHost: 127.0.0.1:"))
	})

	It("keeps the connection for the next attempts, and reads Content-Length, chunked and informational answers", func() {
		answers := []string{
			noContent,
			"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello there",
			"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nbroke\r\n6\r\n again\r\n0\r\n\r\n",
			"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
			"HTTP/1.1 410 Gone\r\nContent-Length: 300\r\n\r\n" + strings.Repeat("x", 300),
		}
		e := newRawEndpoint(func(n int) (string, bool) { return answers[n], false })
		want := []struct {
			status  int
			snippet string
		}{{204, ""}, {200, "hello there"}, {500, "broke again"}, {202, ""}, {410, strings.Repeat("x", 256)}}
		for _, w := range want {
			status, snippet, err := post(e.url("/"), "{}")
			Expect(err).NotTo(HaveOccurred())
			Expect(status).To(Equal(w.status))
			Expect(snippet).To(Equal(w.snippet))
		}
		Expect(e.conns.Load()).To(BeEquivalentTo(1), "one keep-alive connection for all")
	})

	It("does not reuse a connection the endpoint closes, asks it to close, or leaves with a body unread", func() {
		answers := []struct {
			raw   string
			close bool
		}{
			{noContent, true}, // closed after the answer, without saying so
			{"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", false},
			{"HTTP/1.0 200 OK\r\n\r\nto the end", true}, // a body to the connection's close
			{"HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\n" + strings.Repeat("y", 70000), false},
			{noContent, false},
			{noContent, false},
		}
		e := newRawEndpoint(func(n int) (string, bool) { return answers[n].raw, answers[n].close })
		for i := range answers {
			if i == 1 {
				// The endpoint's close has reached this side before the next attempt looks.
				Eventually(func() int32 { return e.conns.Load() }).Should(BeEquivalentTo(1))
				time.Sleep(50 * time.Millisecond)
			}
			status, _, err := post(e.url("/"), "{}")
			Expect(err).NotTo(HaveOccurred(), "attempt %d", i)
			Expect(status).To(BeNumerically(">=", 200))
		}
		Expect(e.conns.Load()).To(BeEquivalentTo(5), "a new connection after each of the first four answers")
	})

	It("sends again on a new connection a request whose write failed on a reused one", func() {
		e := newRawEndpoint(func(int) (string, bool) { return noContent, false })
		_, _, err := post(e.url("/"), "{}")
		Expect(err).NotTo(HaveOccurred())
		// The idle connection breaks on this side without the peek noticing: its writes fail.
		c.mu.Lock()
		for _, list := range c.idle {
			for _, pc := range list {
				_ = pc.Conn.(*net.TCPConn).CloseWrite()
			}
		}
		c.mu.Unlock()
		status, _, err := post(e.url("/"), "{}")
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(204))
		Expect(e.conns.Load()).To(BeEquivalentTo(2))
	})

	It("gives up on an answer whose headers never end, as net/http does past 10 MiB", func() {
		e := newRawEndpoint(func(int) (string, bool) {
			return "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 11<<10), false
		})
		_, _, err := post(e.url("/"), "{}")
		Expect(err).To(MatchError(ContainSubstring("server response headers exceeded 10485760 bytes")))
	})

	It("decompresses a gzipped answer's start for the failure's message", func() {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		_, _ = zw.Write([]byte("quota exceeded"))
		Expect(zw.Close()).To(Succeed())
		e := newRawEndpoint(func(int) (string, bool) {
			return "HTTP/1.1 429 Too Many Requests\r\nContent-Encoding: gzip\r\nContent-Length: " +
				strconv.Itoa(z.Len()) + "\r\n\r\n" + z.String(), false
		})
		status, snippet, err := post(e.url("/"), "{}")
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(429))
		Expect(snippet).To(Equal("quota exceeded"))
	})

	It("gives up at the deadline, and at once when the attempt's context ends, with net/http's errors", func() {
		e := newRawEndpoint(func(int) (string, bool) { return "", false }) // never answers
		t := c.target(e.url("/slow"))
		_, _, err := c.post(ctx, t, time.Now().Add(200*time.Millisecond), request("{}"))
		var ne net.Error
		Expect(errors.As(err, &ne)).To(BeTrue())
		Expect(ne.Timeout()).To(BeTrue())
		Expect(err.Error()).To(HavePrefix(`Post "` + e.url("/slow") + `": `))
		outcome, failure := describeSendError(err, 200*time.Millisecond)
		Expect(outcome).To(Equal(attemptTimeout))
		Expect(failure).To(Equal("no answer within 200ms"))

		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(100*time.Millisecond, cancel)
		began := time.Now()
		_, _, err = c.post(cctx, t, time.Now().Add(time.Minute), request("{}"))
		Expect(err).To(HaveOccurred())
		Expect(time.Since(began)).To(BeNumerically("<", 30*time.Second))

		_, _, err = c.post(ctx, c.target("http://127.0.0.1:1/"), time.Now().Add(time.Second), request("{}"))
		outcome, failure = describeSendError(err, time.Second)
		Expect(outcome).To(Equal(attemptRefused))
		Expect(failure).To(Equal("connection refused"))
	})

	It("cuts short at once the attempts under the context it watches when it ends, and those begun after", func() {
		e := newRawEndpoint(func(n int) (string, bool) { // answers the first request only
			if n == 0 {
				return noContent, false
			}
			return "", false
		})
		t := c.target(e.url("/slow"))
		wctx, cancel := context.WithCancel(ctx)
		c.watch(wctx)
		actx := context.WithValue(wctx, struct{}{}, "an attempt's own values") // the same Done
		busy := func() int {
			c.mu.Lock()
			defer c.mu.Unlock()
			n := 0
			for pc := c.busy; pc != nil; pc = pc.next {
				n++
			}
			return n
		}
		status, _, err := c.post(actx, t, time.Now().Add(time.Minute), request("{}"))
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(204))
		Expect(busy()).To(BeZero(), "an idle connection is not busy")
		errs := make(chan error, 2)
		for range 2 { // one on the idle connection, one on a new one
			go func() { _, _, err := c.post(actx, t, time.Now().Add(time.Minute), request("{}")); errs <- err }()
		}
		Eventually(busy).Should(Equal(2))
		cancel()
		for range 2 {
			var err error
			Eventually(errs).WithTimeout(10 * time.Second).Should(Receive(&err))
			Expect(errors.Is(err, errH1Aborted)).To(BeTrue(), "%v", err)
		}
		began := time.Now()
		_, _, err = c.post(actx, t, time.Now().Add(time.Minute), request("{}"))
		Expect(err).To(HaveOccurred())
		Expect(time.Since(began)).To(BeNumerically("<", 30*time.Second))
		Expect(busy()).To(BeZero())
	})

	It("leaves to net/http the URLs it does not send to itself", func() {
		for _, u := range []string{"https://example.com/hooks", "http://user:pw@example.com/", "http://[fe80::1%25eth0]/",
			"http://exa mple.com/", "http://example.com:/x", "http://bücher.example/"} {
			Expect(c.target(u)).To(BeNil(), u)
		}
		t := c.target("http://example.com/hooks?a=1")
		Expect(t).NotTo(BeNil())
		Expect(*t).To(Equal(h1Target{addr: "example.com:80", host: "example.com", uri: "/hooks?a=1", url: "http://example.com/hooks?a=1"}))
		t = c.target("http://[::1]:8080")
		Expect(*t).To(Equal(h1Target{addr: "[::1]:8080", host: "[::1]:8080", uri: "/", url: "http://[::1]:8080"}))
	})
})
