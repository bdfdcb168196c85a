package main

import (
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an in-process OTLP/HTTP trace collector: it keeps the spans it receives.
type collector struct {
	*httptest.Server
	mu    sync.Mutex
	spans []span
}

// span is what the specs look at of a received span.
type span struct {
	Name, TraceID, SpanID, ParentID string
	Attrs                           map[string]string
}

func newCollector() *collector {
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer GinkgoRecover()
		Expect(r.URL.Path).To(Equal("/v1/traces"))
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			Expect(err).NotTo(HaveOccurred())
			body = zr
		}
		b, err := io.ReadAll(body)
		Expect(err).NotTo(HaveOccurred())
		var req coltrace.ExportTraceServiceRequest
		Expect(proto.Unmarshal(b, &req)).To(Succeed())
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					attrs := map[string]string{}
					for _, kv := range s.Attributes {
						attrs[kv.Key] = strings.Trim(kv.Value.String(), " ")
					}
					c.spans = append(c.spans, span{Name: s.Name, TraceID: hex.EncodeToString(s.TraceId),
						SpanID: hex.EncodeToString(s.SpanId), ParentID: hex.EncodeToString(s.ParentSpanId), Attrs: attrs})
				}
			}
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	DeferCleanup(c.Close)
	return c
}

// received returns the spans of one trace.
func (c *collector) received(traceID string) []span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []span
	for _, s := range c.spans {
		if s.TraceID == traceID {
			out = append(out, s)
		}
	}
	return out
}

// hookReceiver records the traceparent header of every webhook it gets, by event type.
type hookReceiver struct {
	*httptest.Server
	mu           sync.Mutex
	traceparents map[string][]string
}

func newHookReceiver() *hookReceiver {
	h := &hookReceiver{traceparents: map[string][]string{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e struct {
			Type string `json:"type"`
		}
		_ = json.NewDecoder(r.Body).Decode(&e)
		h.mu.Lock()
		h.traceparents[e.Type] = append(h.traceparents[e.Type], r.Header.Get("traceparent"))
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	DeferCleanup(h.Close)
	return h
}

func (h *hookReceiver) of(typ string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.traceparents[typ]...)
}

var _ = Describe("tracing", func() {
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	const parent = "00-" + traceID + "-00f067aa0ba902b7-01"

	// sendTraced sends a message with the caller's traceparent through a served API and returns
	// the webhook receiver, once message.delivered has reached it.
	sendTraced := func(c *cli, s *servedAPI, hooks *hookReceiver) {
		key := regexp.MustCompile(`sk_live_[A-Za-z0-9]+`).FindString(s.stdout.String())
		project := regexp.MustCompile(`project:\s+(prj_\w+)`).FindStringSubmatch(s.stdout.String())[1]
		c.json(&map[string]any{}, "webhook set", "--project", project, "--url", hooks.URL, "--webhook-allow-private")
		obj := func(status int, body string) map[string]any {
			ExpectWithOffset(1, status).To(BeNumerically("<", 300), body)
			var m map[string]any
			ExpectWithOffset(1, json.Unmarshal([]byte(body), &m)).To(Succeed())
			return m
		}
		acct := obj(s.do("POST", "/accounts", key, `{"name":"Traced"}`))["id"].(string)
		pn := obj(s.do("POST", "/accounts/"+acct+"/phone_numbers", key, `{"area_code":"415"}`))["id"].(string)
		cpn := obj(s.do("POST", "/accounts/"+acct+"/campaigns", key, `{"use_cases":["customer_care"],"description":"Reminders",
			"volume":"low","message_samples":["Hello there","See you"],"consent_flow":"Booking form","privacy_policy_url":"https://acme.example/p"}`))["id"].(string)
		Eventually(func() any { return obj(s.do("GET", "/campaigns/"+cpn, key, ""))["status"] }).WithTimeout(10 * time.Second).Should(Equal("active"))
		obj(s.do("PATCH", "/phone_numbers/"+pn, key, `{"campaign_id":"`+cpn+`"}`))
		s.headers = map[string]string{"traceparent": parent}
		obj(s.do("POST", "/accounts/"+acct+"/messages", key, `{"to":"+14155550177","body":"Traced"}`))
		s.headers = nil
		Eventually(func() []string { return hooks.of("message.delivered") }).WithTimeout(20 * time.Second).Should(HaveLen(1))
	}

	It("sends a span per request, statement batch, carrier call and webhook attempt to the OTLP collector, and carries the request's traceparent into its message's webhooks", func() {
		col := newCollector()
		hooks := newHookReceiver()
		c := newCLI()
		s := c.serve("--dev-key", "--otlp-endpoint", col.URL, "--sim-latency", "10ms", "--sim-review-delay", "100ms", "--webhook-allow-private")
		sendTraced(c, s, hooks)
		Expect(hooks.of("message.sent")).To(ConsistOf(MatchRegexp(`^00-` + traceID + `-[0-9a-f]{16}-01$`)))
		Expect(hooks.of("message.delivered")).To(ConsistOf(MatchRegexp(`^00-` + traceID + `-[0-9a-f]{16}-01$`)))
		Expect(s.stop()).To(Succeed()) // flushes the spans

		spans := col.received(traceID)
		names := map[string]int{}
		for _, sp := range spans {
			names[sp.Name]++
		}
		Expect(names).To(HaveKeyWithValue("POST /accounts/:account_id/messages", 1))
		Expect(names).To(HaveKeyWithValue("carrier.submit", 1))
		Expect(names).To(HaveKeyWithValue("webhook.attempt", BeNumerically(">=", 2)))
		Expect(names).To(HaveKey("store.batch"))
		var request span
		for _, sp := range spans {
			if sp.Name == "POST /accounts/:account_id/messages" {
				request = sp
			}
		}
		Expect(request.ParentID).To(Equal("00f067aa0ba902b7"), "the request continues the caller's trace")
		Expect(request.Attrs).To(HaveKeyWithValue("http.response.status_code", ContainSubstring("201")))
		Expect(len(col.spans)).To(BeNumerically(">", len(spans)), "other requests have traces of their own")
	})

	It("is off by default: nothing is traced and no traceparent reaches the webhooks", func() {
		hooks := newHookReceiver()
		c := newCLI()
		s := c.serve("--dev-key", "--sim-latency", "10ms", "--sim-review-delay", "100ms", "--webhook-allow-private")
		sendTraced(c, s, hooks)
		Expect(hooks.of("message.sent")).To(ConsistOf(""))
		Expect(s.stop()).To(Succeed())
	})

	It("refuses an OTLP endpoint that is not an http(s) URL", func() {
		_, err := serveConfig("--otlp-endpoint", "collector:4318")
		Expect(err).To(MatchError(ContainSubstring("SWITCHBOARD_OTLP_ENDPOINT / --otlp-endpoint")))
	})
})
