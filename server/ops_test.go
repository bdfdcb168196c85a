package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// requestCount reads switchboard_http_requests_total for one operation, method and status from
// the /metrics text; 0 when the series does not exist yet.
func requestCount(metrics, operation, method string, status int) float64 {
	re := regexp.MustCompile(`(?m)^switchboard_http_requests_total\{([^}]*)\} (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(metrics, -1) {
		labels := m[1]
		if strings.Contains(labels, `operation="`+operation+`"`) && strings.Contains(labels, `method="`+method+`"`) &&
			strings.Contains(labels, `status="`+strconv.Itoa(status)+`"`) {
			v, err := strconv.ParseFloat(m[2], 64)
			Expect(err).NotTo(HaveOccurred())
			return v
		}
	}
	return 0
}

// metricValue reads one series (a name with its labels as /metrics prints them, e.g.
// `switchboard_webhook_attempts_total{outcome="timeout"}`) from the /metrics text; 0 when the
// series does not exist yet.
func metricValue(metrics, series string) float64 {
	for _, line := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			Expect(err).NotTo(HaveOccurred())
			return f
		}
	}
	return 0
}

// scrape reads the exposition the metrics listener serves for s (Prometheus text).
func scrape(s *server.Server) string {
	rec := httptest.NewRecorder()
	s.Metrics().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	ExpectWithOffset(1, rec.Code).To(Equal(http.StatusOK))
	ExpectWithOffset(1, rec.Header().Get("Content-Type")).To(HavePrefix("text/plain"))
	return rec.Body.String()
}

// decodeEnvelope reads an error envelope from a raw body.
func decodeEnvelope(body []byte) map[string]any {
	var m struct {
		Error map[string]any `json:"error"`
	}
	ExpectWithOffset(1, json.Unmarshal(body, &m)).To(Succeed(), "body: %s", body)
	return m.Error
}

var _ = Describe("Operations", func() {
	var t *tenant
	BeforeEach(func() { t = newTenant() })

	Describe("probes", func() {
		It("answers /healthz with 200 {status: ok}", func() {
			r := t.withKey("").get("/healthz")
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.JSON()).To(Equal(map[string]any{"status": "ok"}))
		})

		It("answers /readyz with 200 while the database answers, with what it checked", func() {
			r := t.withKey("").get("/readyz")
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.JSON()).To(HaveKeyWithValue("status", "ok"))
			Expect(r.JSON()).To(HaveKeyWithValue("checks", Equal(map[string]any{
				"database": "ok", "migrations": "current", "carriers": map[string]any{"sim": "ready"}})))
		})

		Describe("on a database of another release", func() {
			// readyz answers the readiness probe of a server over a fresh SQLite database that
			// change alters.
			readyz := func(change string) *response {
				ctx := context.Background()
				db, err := store.Open(ctx, store.Config{URL: filepath.Join(GinkgoT().TempDir(), "other.db")})
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(db.Close)
				_, err = db.Migrate(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(db.DB().Exec(change).Error).To(Succeed())
				other, err := service.NewCore(service.CoreConfig{Store: db, PublicURL: "https://switchboard.test", Logger: testLogger(),
					Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
						c, err := sim.New(sim.Config{Store: db.Sim(), Reporter: r, Logger: testLogger()})
						return []carriers.Carrier{c}, err
					}})
				Expect(err).NotTo(HaveOccurred())
				s := newAPI(server.Config{Core: other})
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
				return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
			}

			It("answers 503 not_ready while migrations of this release are pending", func() {
				r := readyz(fmt.Sprintf("DELETE FROM schema_migrations WHERE version = %d", store.SchemaVersion()))
				Expect(r).To(HaveError(http.StatusServiceUnavailable, "not_ready"))
				Expect(decodeEnvelope(r.Body)).To(HaveKeyWithValue("detail", HaveKeyWithValue("migrations", "1 pending")))
			})

			It("stays ready when the database is ahead (a newer release migrated it), and says so", func() {
				r := readyz("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'future', CURRENT_TIMESTAMP)")
				Expect(r).To(HaveStatus(http.StatusOK))
				Expect(r.JSON()).To(HaveKeyWithValue("checks", HaveKeyWithValue("migrations", "ahead")))
			})
		})
	})

	Describe("metrics", func() {
		metricsText := func() string { return scrape(t.api) }
		// fresh gives a tenant a server whose operator's figures are read on every scrape.
		fresh := func(t *tenant) *tenant {
			t.api = newAPI(server.Config{RateLimit: -1, OperatorMetricsTTL: -1})
			return t
		}

		It("are not served on the API's port", func() {
			Expect(t.withKey("").get("/metrics")).To(HaveStatus(http.StatusNotFound))
		})

		It("counts requests by operation, method and status", func() {
			id := t.createAccount("Counted")
			before := metricsText()
			Expect(t.get("/accounts/" + id)).To(HaveStatus(http.StatusOK))
			Expect(t.get("/accounts/" + store.NewID("acct"))).To(HaveStatus(http.StatusNotFound))
			after := metricsText()
			Expect(after).To(ContainSubstring("# TYPE switchboard_http_requests_total counter"))
			Expect(requestCount(after, "getAccount", "GET", 200)).To(BeNumerically(">=", requestCount(before, "getAccount", "GET", 200)+1))
			Expect(requestCount(after, "getAccount", "GET", 404)).To(BeNumerically(">=", requestCount(before, "getAccount", "GET", 404)+1))
		})

		It("records request latency per operation", func() {
			t.get("/accounts")
			Expect(metricsText()).To(MatchRegexp(`(?m)^switchboard_http_request_duration_seconds_bucket\{[^}]*operation="listAccounts"[^}]*\} \d+`))
		})

		It("count carrier submissions by adapter, and messages by status and failure reason", func() {
			t, acct, _, from := newSendingAccount()
			t = fresh(t)
			before := scrape(t.api)
			m := t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Counted"})
			t.awaitStatus(m["id"].(string), "delivered")
			failed := t.send(acct, map[string]any{"to": "+15005550003", "from": from, "body": "To a landline"})
			t.awaitStatus(failed["id"].(string), "failed")
			after := scrape(t.api)
			Expect(metricValue(after, `switchboard_carrier_submit_duration_seconds_count{carrier="sim"}`)).
				To(BeNumerically(">=", metricValue(before, `switchboard_carrier_submit_duration_seconds_count{carrier="sim"}`)+2))
			Expect(metricValue(after, `switchboard_messages{failure_reason="",status="delivered"}`)).To(BeNumerically(">=", 1))
			Expect(metricValue(after, `switchboard_messages{failure_reason="landline",status="failed"}`)).To(BeNumerically(">=", 1))
			Expect(metricValue(after, "switchboard_operator_metrics_up")).To(BeEquivalentTo(1))
		})

		It("report each webhook endpoint's backlog and the job queues' depth", func() {
			t, acct, _, from := newSendingAccount()
			t = fresh(t)
			l, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			refused := l.Addr().String()
			Expect(l.Close()).To(Succeed())
			e := t.subscribe("http://"+refused+"/hooks", webhooks.EventMessageSent)
			m := t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Backlog"})
			t.awaitStatus(m["id"].(string), "delivered")
			series := `switchboard_webhook_backlog{endpoint="` + e.ID + `",project="` + t.ProjectID + `"}`
			Eventually(func() float64 { return metricValue(scrape(t.api), series) }).WithTimeout(30*time.Second).
				WithPolling(time.Second).Should(BeEquivalentTo(1), "the delivery waits for its retry")
			Expect(scrape(t.api)).To(SatisfyAll(MatchRegexp(`(?m)^switchboard_queue_depth\{queue="webhooks"\} \d+$`),
				MatchRegexp(`(?m)^switchboard_queue_oldest_seconds\{queue="messages"\} `)))
		})

		It("labels unknown routes as operation unknown, never by their path", func() {
			t.get("/no/such/route/zq4242")
			text := metricsText()
			Expect(requestCount(text, "unknown", "GET", 404)).To(BeNumerically(">=", 1))
			Expect(text).NotTo(ContainSubstring("zq4242"), "a number in the text may well contain 4242")
		})

		It("labels a method that is not one of HTTP's as other, so that clients cannot make series without end", func() {
			before := requestCount(metricsText(), "unknown", "other", 404) + requestCount(metricsText(), "unknown", "other", 405)
			for _, method := range []string{"ZQFOO1", "ZQFOO2", "ZQFOO3"} {
				Expect(t.request(method, "/accounts", nil).Status).To(BeNumerically(">=", 400))
			}
			text := metricsText()
			Expect(text).NotTo(ContainSubstring("ZQFOO"))
			Expect(requestCount(text, "unknown", "other", 404) + requestCount(text, "unknown", "other", 405)).To(Equal(before + 3))
		})
	})

	Describe("/docs", func() {
		It("renders the embedded openapi.yaml with Redoc served from the binary, nothing from elsewhere", func() {
			page := t.withKey("").get("/docs")
			Expect(page).To(HaveStatus(http.StatusOK))
			Expect(page.Header.Get("Content-Type")).To(HavePrefix("text/html"))
			Expect(string(page.Body)).To(SatisfyAll(ContainSubstring(`<redoc spec-url="/docs/openapi.json"`),
				ContainSubstring(`<script type="module" src="/docs/redoc.standalone.js">`), Not(ContainSubstring("https://"))))
			csp := page.Header.Get("Content-Security-Policy")
			Expect(csp).To(SatisfyAll(ContainSubstring("default-src 'self'"), Not(ContainSubstring("http"))), "the browser loads nothing from a CDN")

			bundle := t.withKey("").get("/docs/redoc.standalone.js")
			Expect(bundle).To(HaveStatus(http.StatusOK))
			Expect(bundle.Header.Get("Content-Type")).To(HavePrefix("text/javascript"))
			Expect(string(bundle.Body[:200])).To(ContainSubstring("Version: 3.0.1"))

			spec := t.withKey("").get("/docs/openapi.json")
			Expect(spec).To(HaveStatus(http.StatusOK))
			Expect(spec.JSON()).To(SatisfyAll(HaveKeyWithValue("openapi", HavePrefix("3.")),
				HaveKeyWithValue("info", HaveKeyWithValue("title", "Switchboard API")),
				HaveKeyWithValue("paths", HaveKey("/accounts/{account_id}/messages"))))
		})
	})

	Describe("/.well-known/jwks.json", func() {
		It("publishes the Ed25519 public keys that verify user tokens", func() {
			r := t.withKey("").get("/.well-known/jwks.json")
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			var set struct {
				Keys []map[string]string `json:"keys"`
			}
			r.Into(&set)
			Expect(set.Keys).NotTo(BeEmpty())
			kids := map[string]bool{}
			for _, k := range set.Keys {
				Expect(k).To(HaveKeyWithValue("kty", "OKP"))
				Expect(k).To(HaveKeyWithValue("crv", "Ed25519"))
				Expect(k).To(HaveKeyWithValue("alg", "EdDSA"))
				Expect(k).To(HaveKeyWithValue("use", "sig"))
				Expect(k["kid"]).NotTo(BeEmpty())
				Expect(kids).NotTo(HaveKey(k["kid"]), "kids are unique")
				kids[k["kid"]] = true
				x, err := base64.RawURLEncoding.DecodeString(k["x"])
				Expect(err).NotTo(HaveOccurred())
				Expect(x).To(HaveLen(32))
				Expect(k).NotTo(HaveKey("d"), "never the private key")
			}
		})
	})

	Describe("every operation", func() {
		It("validates the request before its handler runs", func() {
			account := t.createAccount("Acme")
			Expect(t.post("/accounts/"+account+"/verifications", map[string]any{"phone_number": "4155550123"})).To(HaveFieldError("phone_number"))
			Expect(t.get("/calls/call_nope")).To(HaveFieldError("id"))
		})
	})

	Describe("API logs", func() {
		It("records every authenticated request with method, path, status, key and request id", func() {
			ctx := context.Background()
			var sent []*response
			sent = append(sent, t.get("/accounts?limit=5"))
			sent = append(sent, t.post("/accounts", map[string]any{"name": "Logged"}))
			sent = append(sent, t.get("/accounts/"+store.NewID("acct")))
			sent = append(sent, t.post("/accounts", map[string]any{}))
			api.FlushLogs()

			logs, err := st.ListAPILogs(ctx, t.ProjectID, 10)
			Expect(err).NotTo(HaveOccurred())
			Expect(logs).To(HaveLen(len(sent)))
			byRequest := map[string]store.APILog{}
			for _, l := range logs {
				byRequest[l.RequestID] = l
			}
			want := []struct {
				method, path string
			}{{"GET", "/accounts"}, {"POST", "/accounts"}, {"GET", "/accounts/"}, {"POST", "/accounts"}}
			for i, r := range sent {
				l, ok := byRequest[r.Header.Get("X-Request-Id")]
				Expect(ok).To(BeTrue(), "request %d (%s) is logged under its X-Request-Id", i, r.Header.Get("X-Request-Id"))
				Expect(l.ProjectID).To(Equal(t.ProjectID))
				Expect(l.KeyID).To(Equal(t.KeyID))
				Expect(l.Method).To(Equal(want[i].method))
				Expect(l.Path).To(HavePrefix(want[i].path))
				Expect(l.Path).NotTo(ContainSubstring("?"))
				Expect(l.Status).To(Equal(r.Status))
				Expect(l.DurationMicros).To(BeNumerically(">=", 0))
				Expect(l.CreatedAt).To(BeTemporally("~", time.Now(), time.Minute))
			}
		})

		It("does not record requests that did not authenticate", func() {
			ctx := context.Background()
			k, secret, err := st.CreateAPIKey(ctx, t.ProjectID, false)
			Expect(err).NotTo(HaveOccurred())
			_, err = st.RevokeAPIKey(ctx, k.ID)
			Expect(err).NotTo(HaveOccurred())

			Expect(t.withKey(secret).get("/accounts")).To(HaveStatus(http.StatusUnauthorized))
			Expect(t.withKey("").get("/accounts")).To(HaveStatus(http.StatusUnauthorized))
			Expect(t.withKey("").get("/healthz")).To(HaveStatus(http.StatusOK))
			ok := t.get("/accounts")
			api.FlushLogs()

			logs, err := st.ListAPILogs(ctx, t.ProjectID, 10)
			Expect(err).NotTo(HaveOccurred())
			Expect(logs).To(HaveLen(1))
			Expect(logs[0].RequestID).To(Equal(ok.Header.Get("X-Request-Id")))
			Expect(logs[0].KeyID).NotTo(Equal(k.ID))
		})

		It("keeps each project's logs to itself", func() {
			other := newTenant()
			other.get("/accounts")
			t.get("/accounts")
			api.FlushLogs()
			logs, err := st.ListAPILogs(context.Background(), other.ProjectID, 10)
			Expect(err).NotTo(HaveOccurred())
			Expect(logs).To(HaveLen(1))
			Expect(logs[0].KeyID).To(Equal(other.KeyID))
		})
	})

	Describe("the HTTPS guard of a plain listener", func() {
		var guard http.Handler
		BeforeEach(func() {
			guard = server.HTTPSGuard(api, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")})
		})

		send := func(remoteAddr string, headers ...string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodGet, "http://switchboard.test/accounts", nil)
			req.RemoteAddr = remoteAddr
			req.Header.Set("Authorization", "Bearer "+t.Key)
			for i := 0; i+1 < len(headers); i += 2 {
				req.Header.Set(headers[i], headers[i+1])
			}
			rec := httptest.NewRecorder()
			guard.ServeHTTP(rec, req)
			return rec
		}

		DescribeTable("refuses with 403 https_required",
			func(remoteAddr string, headers ...string) {
				rec := send(remoteAddr, headers...)
				Expect(rec.Code).To(Equal(http.StatusForbidden))
				Expect(rec.Header().Get("Content-Type")).To(HavePrefix("application/json"))
				Expect(decodeEnvelope(rec.Body.Bytes())).To(SatisfyAll(HaveKeyWithValue("type", "https_required"), HaveKeyWithValue("message", Not(BeEmpty()))))
				Expect(rec.Header().Get("X-Request-Id")).NotTo(BeEmpty())
			},
			Entry("a client that is not a trusted proxy", "203.0.113.5:41000"),
			Entry("an untrusted client that claims HTTPS", "203.0.113.5:41000", "X-Forwarded-Proto", "https"),
			Entry("a trusted proxy without X-Forwarded-Proto", "10.1.2.3:41000"),
			Entry("a trusted proxy that relays plain HTTP", "10.1.2.3:41000", "X-Forwarded-Proto", "http"),
			Entry("a malformed remote address", "not-an-address", "X-Forwarded-Proto", "https"),
		)

		DescribeTable("passes through what a trusted proxy received over HTTPS",
			func(remoteAddr string) {
				rec := send(remoteAddr, "X-Forwarded-Proto", "https")
				Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
				Expect(rec.Body.String()).To(ContainSubstring(`"data"`))
			},
			Entry("IPv4", "10.1.2.3:41000"),
			Entry("IPv4-mapped IPv6", "[::ffff:10.1.2.3]:41000"),
			Entry("IPv6", "[fd00::1]:41000"),
		)
	})

	Describe("TLS", func() {
		var dir string
		BeforeEach(func() { dir = GinkgoT().TempDir() })

		It("creates a self-signed pair once and reuses it", func() {
			certFile, keyFile, created, err := server.EnsureSelfSignedCert(dir)
			Expect(err).NotTo(HaveOccurred())
			Expect(created).To(BeTrue())
			certPEM, err := os.ReadFile(certFile)
			Expect(err).NotTo(HaveOccurred())
			info, err := os.Stat(keyFile)
			Expect(err).NotTo(HaveOccurred())
			Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)), "the private key is readable by its owner only")

			again, againKey, created, err := server.EnsureSelfSignedCert(dir)
			Expect(err).NotTo(HaveOccurred())
			Expect(created).To(BeFalse())
			Expect(again).To(Equal(certFile))
			Expect(againKey).To(Equal(keyFile))
			Expect(os.ReadFile(certFile)).To(Equal(certPEM))

			pair, err := tls.LoadX509KeyPair(certFile, keyFile)
			Expect(err).NotTo(HaveOccurred())
			leaf, err := x509.ParseCertificate(pair.Certificate[0])
			Expect(err).NotTo(HaveOccurred())
			Expect(leaf.VerifyHostname("localhost")).To(Succeed())
			Expect(leaf.VerifyHostname("127.0.0.1")).To(Succeed())
			Expect(leaf.VerifyHostname("::1")).To(Succeed())
			Expect(leaf.NotAfter).To(BeTemporally(">", time.Now().AddDate(1, 0, 0)))
		})

		It("creates the directory it is given", func() {
			certFile, _, created, err := server.EnsureSelfSignedCert(filepath.Join(dir, "nested", "tls"))
			Expect(err).NotTo(HaveOccurred())
			Expect(created).To(BeTrue())
			Expect(certFile).To(BeAnExistingFile())
		})

		It("serves HTTPS, and answers plain HTTP with 403 https_required on the TLS port and on the plain listener", func() {
			certFile, keyFile, _, err := server.EnsureSelfSignedCert(dir)
			Expect(err).NotTo(HaveOccurred())
			certPEM, err := os.ReadFile(certFile)
			Expect(err).NotTo(HaveOccurred())

			ctx, cancel := context.WithCancel(context.Background())
			DeferCleanup(cancel)
			type addrs struct{ tls, plain string }
			ready := make(chan addrs, 1)
			done := make(chan error, 1)
			go func() {
				defer GinkgoRecover()
				done <- api.Serve(ctx, server.ListenConfig{
					Addr: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile, PlainAddr: "127.0.0.1:0",
				}, func(tlsAddr, plainAddr string) { ready <- addrs{tlsAddr, plainAddr} })
			}()
			var a addrs
			Eventually(ready).WithTimeout(5 * time.Second).Should(Receive(&a))

			roots := x509.NewCertPool()
			Expect(roots.AppendCertsFromPEM(certPEM)).To(BeTrue())
			transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS12}}
			DeferCleanup(transport.CloseIdleConnections)
			client := &http.Client{Transport: transport, Timeout: 5 * time.Second}

			By("answering HTTPS with the generated certificate")
			resp, err := client.Get("https://" + a.tls + "/healthz")
			Expect(err).NotTo(HaveOccurred())
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
			Expect(resp.TLS).NotTo(BeNil())

			req, _ := http.NewRequest(http.MethodPost, "https://"+a.tls+"/accounts", bytes.NewReader([]byte(`{"name":"Over TLS"}`)))
			req.Header.Set("Authorization", "Bearer "+t.Key)
			req.Header.Set("Content-Type", "application/json")
			resp, err = client.Do(req)
			Expect(err).NotTo(HaveOccurred())
			resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusCreated))

			By("refusing plain HTTP on the TLS port with 403 https_required")
			plainClient := &http.Client{Timeout: 5 * time.Second}
			resp, err = plainClient.Get("http://" + a.tls + "/healthz")
			Expect(err).NotTo(HaveOccurred())
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusForbidden))
			Expect(decodeEnvelope(body)).To(HaveKeyWithValue("type", "https_required"))

			By("refusing plain HTTP on the plain listener with 403 https_required")
			resp, err = plainClient.Get("http://" + a.plain + "/accounts")
			Expect(err).NotTo(HaveOccurred())
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusForbidden))
			Expect(decodeEnvelope(body)).To(HaveKeyWithValue("type", "https_required"))

			By("stopping when the context is canceled")
			cancel()
			Eventually(done).WithTimeout(20 * time.Second).Should(Receive(BeNil()))
			_, err = client.Get("https://" + a.tls + "/healthz")
			Expect(err).To(HaveOccurred())
		})

		It("fails to serve without a readable certificate", func() {
			err := api.Serve(context.Background(), server.ListenConfig{
				Addr: "127.0.0.1:0", CertFile: filepath.Join(dir, "missing.pem"), KeyFile: filepath.Join(dir, "missing-key.pem"),
			}, nil)
			Expect(err).To(MatchError(ContainSubstring("certificate")))
		})
	})
})
