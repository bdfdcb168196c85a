package server_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service/webhooks"
)

// These specs talk to the API as a client on the network does: raw bytes over a real TLS
// listener (server.Serve), so that what net/http answers itself, below the handlers, is seen too.
var _ = Describe("Answers over the network", Ordered, ContinueOnFailure, func() {
	var (
		t         *tenant
		tlsAddr   string
		plainAddr string
		// file is the signed path of a stored recording (48,044 bytes).
		file string
	)
	BeforeAll(func() {
		t = newTenant()
		acct := t.createAccount("Acme Dental")
		_, number := t.addNumber(acct, numberSetup{})
		c, err := core.Carriers.Get(sim.Name)
		Expect(err).NotTo(HaveOccurred())
		_, err = c.(*sim.Carrier).PlaceCall(context.Background(), sim.Call{From: newHandset(), To: number, VoicemailSeconds: 3})
		Expect(err).NotTo(HaveOccurred())
		vms := t.events(webhooks.EventVoicemailReceived)
		Expect(vms).To(HaveLen(1))
		r := t.get("/recordings/" + vms[0]["recording_id"].(string) + "/file")
		Expect(r).To(HaveStatus(http.StatusFound))
		u, err := url.Parse(r.Header.Get("Location"))
		Expect(err).NotTo(HaveOccurred())
		file = u.Path

		certFile, keyFile, _, err := server.EnsureSelfSignedCert(GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithCancel(context.Background())
		type addrs struct{ tls, plain string }
		ready := make(chan addrs, 1)
		done := make(chan error, 1)
		go func() {
			defer GinkgoRecover()
			done <- api.Serve(ctx, server.ListenConfig{Addr: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile, PlainAddr: "127.0.0.1:0"},
				func(tlsAddr, plainAddr string) { ready <- addrs{tlsAddr, plainAddr} })
		}()
		var a addrs
		Eventually(ready).WithTimeout(5 * time.Second).Should(Receive(&a))
		tlsAddr, plainAddr = a.tls, a.plain
		DeferCleanup(func() {
			cancel()
			Eventually(done).WithTimeout(20 * time.Second).Should(Receive(BeNil()))
		})
	})

	// exchange writes a raw request on a new connection to the TLS port, over TLS unless
	// withoutTLS, and reads the answer.
	exchange := func(raw string, withoutTLS bool) (*http.Response, []byte) {
		var conn net.Conn
		var err error
		if withoutTLS {
			conn, err = net.DialTimeout("tcp", tlsAddr, 5*time.Second)
		} else {
			conn, err = tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", tlsAddr, &tls.Config{InsecureSkipVerify: true})
		}
		ExpectWithOffset(2, err).NotTo(HaveOccurred())
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
		// The server may answer and close before it has read the whole request (a header over
		// the limit): the answer is read whatever the write says.
		go func() { _, _ = io.WriteString(conn, raw) }()
		method, _, _ := strings.Cut(raw, " ")
		resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
		ExpectWithOffset(2, err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		ExpectWithOffset(2, err).NotTo(HaveOccurred())
		return resp, body
	}
	key := func() string { return "Authorization: Bearer " + t.Key + "\r\n" }
	huge := strings.Repeat("a", 1<<20+8192)

	DescribeTable("answers every refusal in the error envelope, with a request id",
		func(build func() string, withoutTLS bool, status int, typ string) {
			raw := build()
			resp, body := exchange(raw, withoutTLS)
			Expect(resp.StatusCode).To(Equal(status), "%s", body)
			Expect(resp.Header.Get("Content-Type")).To(HavePrefix("application/json"))
			Expect(resp.Header.Get("X-Request-Id")).To(HavePrefix("req_"))
			if strings.HasPrefix(raw, "HEAD ") {
				Expect(body).To(BeEmpty())
				Expect(resp.ContentLength).To(BeNumerically(">", 0), "HEAD says how long the GET's envelope is")
				return
			}
			Expect(decodeEnvelope(body)).To(SatisfyAll(HaveKeyWithValue("type", typ), HaveKeyWithValue("message", Not(BeEmpty()))))
		},
		Entry("an unknown route", func() string { return "GET /nope HTTP/1.1\r\nHost: api\r\n\r\n" }, false, 404, "not_found"),
		Entry("HEAD on an unknown route", func() string { return "HEAD /nope HTTP/1.1\r\nHost: api\r\n\r\n" }, false, 404, ""),
		Entry("a wrong method", func() string { return "PUT /accounts HTTP/1.1\r\nHost: api\r\n" + key() + "Content-Length: 0\r\n\r\n" }, false, 405, "method_not_allowed"),
		Entry("TRACE", func() string { return "TRACE /accounts HTTP/1.1\r\nHost: api\r\n\r\n" }, false, 405, "method_not_allowed"),
		Entry("no API key", func() string { return "GET /accounts HTTP/1.1\r\nHost: api\r\n\r\n" }, false, 401, "missing_api_key"),
		Entry("HEAD without an API key", func() string { return "HEAD /accounts HTTP/1.1\r\nHost: api\r\n\r\n" }, false, 401, ""),
		Entry("a header field over 1 MiB", func() string { return "GET /accounts HTTP/1.1\r\nHost: api\r\nX-Big: " + huge + "\r\n\r\n" }, false, 431, "request_header_too_large"),
		Entry("a header over 1 MiB in many fields", func() string {
			return "GET /accounts HTTP/1.1\r\nHost: api\r\n" + strings.Repeat("X-Many: "+strings.Repeat("b", 1000)+"\r\n", 1100) + "\r\n"
		}, false, 431, "request_header_too_large"),
		Entry("a request line over 1 MiB", func() string { return "GET /accounts?q=" + huge + " HTTP/1.1\r\nHost: api\r\n\r\n" }, false, 431, "request_header_too_large"),
		Entry("a header line without a colon", func() string { return "GET /accounts HTTP/1.1\r\nHost: api\r\nNo colon here\r\n\r\n" }, false, 400, "invalid_request"),
		Entry("no Host", func() string { return "GET /accounts HTTP/1.1\r\n\r\n" }, false, 400, "invalid_request"),
		Entry("a malformed method", func() string { return "G(T /accounts HTTP/1.1\r\nHost: api\r\n\r\n" }, false, 400, "invalid_request"),
		Entry("two different Content-Lengths", func() string {
			return "POST /accounts HTTP/1.1\r\nHost: api\r\n" + key() + "Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"
		}, false, 400, "invalid_request"),
		Entry("an unknown Transfer-Encoding", func() string {
			return "POST /accounts HTTP/1.1\r\nHost: api\r\n" + key() + "Transfer-Encoding: gzip\r\n\r\n"
		}, false, 501, "unsupported_transfer_encoding"),
		Entry("HTTP/3.0 on the wire", func() string { return "GET /accounts HTTP/3.0\r\nHost: api\r\n\r\n" }, false, 505, "http_version_not_supported"),
		Entry("an Expect other than 100-continue", func() string {
			return "POST /accounts HTTP/1.1\r\nHost: api\r\n" + key() + "Expect: the-unexpected\r\nContent-Length: 2\r\n\r\n{}"
		}, false, 417, "expectation_failed"),
		Entry("plain HTTP on the TLS port", func() string { return "GET /accounts HTTP/1.1\r\nHost: api\r\n\r\n" }, true, 403, "https_required"),
		Entry("a body over 1 MiB", func() string {
			return "POST /accounts HTTP/1.1\r\nHost: api\r\n" + key() + "Content-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{"
		}, false, 413, "request_too_large"),
		Entry("a body that is not JSON", func() string {
			return "POST /accounts HTTP/1.1\r\nHost: api\r\n" + key() + "Content-Type: application/json\r\nContent-Length: 5\r\n\r\n{name"
		}, false, 400, "invalid_json"),
		Entry("a body of another type", func() string {
			return "POST /accounts HTTP/1.1\r\nHost: api\r\n" + key() + "Content-Type: text/plain\r\nContent-Length: 4\r\n\r\nAcme"
		}, false, 422, "validation_error"),
		Entry("a NUL in the body", func() string {
			return "POST /accounts HTTP/1.1\r\nHost: api\r\n" + key() + "Content-Type: application/json\r\nContent-Length: 20\r\n\r\n" + `{"name":"a\u0000b"} `
		}, false, 422, "validation_error"),
		Entry("a NUL in the path", func() string { return "GET /accounts/acct_%00 HTTP/1.1\r\nHost: api\r\n" + key() + "\r\n" }, false, 422, "validation_error"),
		Entry("a Range past the end of a file", func() string { return "GET " + file + " HTTP/1.1\r\nHost: api\r\nRange: bytes=48044-\r\n\r\n" }, false, 416, "range_not_satisfiable"),
		Entry("a Range that does not parse", func() string { return "GET " + file + " HTTP/1.1\r\nHost: api\r\nRange: bytes=z-y\r\n\r\n" }, false, 416, "range_not_satisfiable"),
		Entry("HEAD with a Range past the end", func() string { return "HEAD " + file + " HTTP/1.1\r\nHost: api\r\nRange: bytes=99999999-\r\n\r\n" }, false, 416, ""),
		Entry("an If-Match the file does not match", func() string { return "GET " + file + " HTTP/1.1\r\nHost: api\r\nIf-Match: \"nope\"\r\n\r\n" }, false, 412, "precondition_failed"),
		Entry("an expired or forged file URL", func() string { return "GET " + file + "x HTTP/1.1\r\nHost: api\r\n\r\n" }, false, 404, "not_found"),
	)

	It("answers a header over the limit on the plain listener in the envelope too", func() {
		conn, err := net.DialTimeout("tcp", plainAddr, 5*time.Second)
		Expect(err).NotTo(HaveOccurred())
		defer conn.Close()
		go func() { _, _ = io.WriteString(conn, "GET /accounts HTTP/1.1\r\nHost: api\r\nX-Big: "+huge+"\r\n\r\n") }()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		Expect(err).NotTo(HaveOccurred())
		body, _ := io.ReadAll(resp.Body)
		Expect(resp.StatusCode).To(Equal(http.StatusRequestHeaderFieldsTooLarge))
		Expect(decodeEnvelope(body)).To(HaveKeyWithValue("type", "request_header_too_large"))
	})

	It("still serves files by Range, to HEAD and to conditional requests, and a header just under the limit", func() {
		resp, body := exchange("GET "+file+" HTTP/1.1\r\nHost: api\r\nRange: bytes=8-11\r\n\r\n", false)
		Expect(resp.StatusCode).To(Equal(http.StatusPartialContent))
		Expect(string(body)).To(Equal("WAVE"))
		resp, body = exchange("HEAD "+file+" HTTP/1.1\r\nHost: api\r\n\r\n", false)
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(resp.ContentLength).To(BeEquivalentTo(48044))
		Expect(body).To(BeEmpty())
		etag := resp.Header.Get("Etag")
		Expect(etag).To(HavePrefix(`"rec_`))
		resp, body = exchange("GET "+file+" HTTP/1.1\r\nHost: api\r\nIf-None-Match: "+etag+"\r\n\r\n", false)
		Expect(resp.StatusCode).To(Equal(http.StatusNotModified))
		Expect(body).To(BeEmpty())
		resp, body = exchange("GET "+file+" HTTP/1.1\r\nHost: api\r\nIf-Match: "+etag+"\r\nRange: bytes=0-3\r\n\r\n", false)
		Expect(resp.StatusCode).To(Equal(http.StatusPartialContent))
		Expect(string(body)).To(Equal("RIFF"))
		resp, body = exchange("GET /accounts HTTP/1.1\r\nHost: api\r\n"+key()+"X-Big: "+strings.Repeat("c", 1<<20-1024)+"\r\n\r\n", false)
		Expect(resp.StatusCode).To(Equal(http.StatusOK), "%s", body)
	})
})
