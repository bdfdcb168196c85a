package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/store"
)

var _ = Describe("logs and metrics of serve", func() {
	var c *cli
	BeforeEach(func() { c = newCLI() })

	// decode decodes a JSON object the API answered with success.
	decode := func(status int, body string) map[string]any {
		ExpectWithOffset(1, status).To(BeNumerically("<", 300), body)
		var m map[string]any
		ExpectWithOffset(1, json.Unmarshal([]byte(body), &m)).To(Succeed(), body)
		return m
	}

	It("serves metrics on their own listener, never on the API's port", func() {
		s := c.serve("--metrics-listen", "127.0.0.1:0")
		Expect(s.metricsAddr).To(MatchRegexp(`^127\.0\.0\.1:\d+$`))
		status, _ := s.do("GET", "/metrics", "", "")
		Expect(status).To(Equal(http.StatusNotFound))
		s.do("GET", "/healthz", "", "")

		resp, err := http.Get("http://" + s.metricsAddr + "/metrics")
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(resp.Header.Get("Content-Type")).To(HavePrefix("text/plain"))
		Expect(string(body)).To(SatisfyAll(
			MatchRegexp(`switchboard_http_requests_total\{method="GET",operation="getHealth",status="200"\} 1`),
			ContainSubstring("switchboard_queue_depth{queue="), ContainSubstring("switchboard_operator_metrics_up 1"),
			ContainSubstring("go_goroutines"), ContainSubstring("promhttp_metric_handler_requests_total")))
		Expect(s.stop()).To(Succeed())
	})

	It("serves no metrics listener unless one is configured", func() {
		s := c.serve()
		Expect(s.metricsAddr).To(BeEmpty())
		Expect(s.stop()).To(Succeed())
	})

	It("logs every line as JSON through one handler: requests at info, shutdown, and never a secret", func(ctx SpecContext) {
		setenv("SWITCHBOARD_SMPP_PASSWORD", "pw-s3cr") // a secret of the configuration, unused by sim
		s := c.serve("--dev-key", "--log-level", "debug", "--sim-latency", "10ms", "--webhook-allow-private")
		key := regexp.MustCompile(`sk_live_[A-Za-z0-9]+`).FindString(s.stdout.String())
		Expect(key).NotTo(BeEmpty())
		project := regexp.MustCompile(`project:\s+(prj_\w+)`).FindStringSubmatch(s.stdout.String())[1]

		acct := decode(s.do("POST", "/accounts", key, `{"name":"Acme Dental"}`))
		acctID := acct["id"].(string)
		user := decode(s.do("POST", "/accounts/"+acctID+"/users", key, `{"first_name":"Brian"}`))
		token := decode(s.do("POST", "/users/"+user["id"].(string)+"/tokens", key, ""))["token"].(string)

		var hook map[string]any
		c.json(&hook, "webhook set", "--project", project, "--url", "http://127.0.0.1:9/hooks", "--webhook-allow-private")
		secret := hook["secret"].(string)
		rawSecret, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		Expect(err).NotTo(HaveOccurred())

		const handset = "+14155550123"
		ver := decode(s.do("POST", "/accounts/"+acctID+"/verifications", key, `{"phone_number":"`+handset+`"}`))
		var code string
		Eventually(func(g Gomega) {
			entries, err := sim.Outbox(ctx, c.openStore().Sim(), handset)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(entries).To(HaveLen(1))
			code = regexp.MustCompile(`\d{6}`).FindString(entries[0].Body)
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(code).To(HaveLen(6))
		check := decode(s.do("POST", "/verifications/"+ver["id"].(string)+"/checks", key, `{"code":"`+code+`"}`))
		Expect(check).To(HaveKeyWithValue("result", "ok"))
		status, _ := s.do("GET", "/accounts", "sk_live_notakey0000000000000000000000000000", "")
		Expect(status).To(Equal(http.StatusUnauthorized))
		number := decode(s.do("POST", "/accounts/"+acctID+"/phone_numbers", key, `{"area_code":"415"}`))["number"].(string)
		var in map[string]any
		c.json(&in, "sim inbound", "--from", "+14155550124", "--to", number, "--body", "hello")
		// The webhook endpoint refuses every attempt: the failures are logged.
		Eventually(func() string { return s.stderr.String() }).WithTimeout(20 * time.Second).Should(ContainSubstring(`"webhook attempt failed"`))
		Expect(s.stop()).To(Succeed())

		logs := s.stderr.String()
		lines := logLines(logs)
		Expect(lines).To(ContainElement(SatisfyAll(HaveKeyWithValue("level", "INFO"), HaveKeyWithValue("msg", "request"),
			HaveKeyWithValue("method", "POST"), HaveKeyWithValue("route", "/accounts/:account_id/verifications"),
			HaveKeyWithValue("status", BeNumerically("==", 201)), HaveKeyWithValue("duration_ms", BeNumerically(">", 0)),
			HaveKeyWithValue("request_id", HavePrefix("req_")), HaveKeyWithValue("key_id", HavePrefix("key_")))))
		Expect(lines).To(ContainElement(SatisfyAll(HaveKeyWithValue("msg", "request"), HaveKeyWithValue("status", BeNumerically("==", 401)))))
		Expect(lines).To(ContainElement(SatisfyAll(HaveKeyWithValue("msg", "webhook attempt failed"), HaveKeyWithValue("attempt", BeNumerically("==", 1)))))
		Expect(lines).To(ContainElement(HaveKeyWithValue("msg", "shutting down")))
		for _, secret := range []string{key, token, code, secret, string(rawSecret), base64.StdEncoding.EncodeToString(rawSecret), "pw-s3cr",
			"sk_live_notakey"} {
			Expect(logs).NotTo(ContainSubstring(secret))
		}
		Expect(logs).NotTo(ContainSubstring("Bearer"))
		Expect(logs).NotTo(ContainSubstring("verification code is"), "no message body that carries a code")
	})
})

var _ = Describe("retention", func() {
	It("prunes API logs past SWITCHBOARD_RETENTION_API_LOGS when serve starts, and logs what it pruned", func(ctx SpecContext) {
		c := newCLI()
		p := c.createProject("Acme")
		st := c.openStore()
		now := time.Now().UTC()
		Expect(st.InsertAPILogs(ctx, []store.APILog{
			{ProjectID: p, KeyID: "key_x", RequestID: "req_old", Method: "GET", Path: "/accounts", Status: 200, CreatedAt: now.Add(-3 * 24 * time.Hour)},
			{ProjectID: p, KeyID: "key_x", RequestID: "req_new", Method: "GET", Path: "/accounts", Status: 200, CreatedAt: now},
		})).To(Succeed())
		s := c.serve("--retention-api-logs", "2d")
		Eventually(func() []string {
			var logs []map[string]any
			c.json(&logs, "logs", "--project", p)
			var ids []string
			for _, l := range logs {
				ids = append(ids, l["request_id"].(string))
			}
			return ids
		}).WithTimeout(20 * time.Second).WithPolling(200 * time.Millisecond).Should(Equal([]string{"req_new"}))
		Eventually(s.stderr.String).Should(ContainSubstring(`"msg":"pruned records past their retention","api_logs":1`))
		Expect(s.stop()).To(Succeed())
	})

	It("refuses a negative retention, naming the setting", func() {
		_, err := serveConfig("--retention-events", "-1d")
		Expect(err).To(MatchError(ContainSubstring("SWITCHBOARD_RETENTION_EVENTS / --retention-events")))
	})
})
