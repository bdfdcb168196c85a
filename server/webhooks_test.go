package server_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// webhookTestTimeout stands in for the 15 s a receiver has to answer.
const webhookTestTimeout = time.Second

// received is one delivery attempt that reached a receiver, with what the receiver answered (0
// when the sender had given up by then).
type received struct {
	Header http.Header
	Body   []byte
	At     time.Time
	Status int
}

func (r received) id() string { return r.Header.Get("webhook-id") }

func (r received) envelope() map[string]any {
	var m map[string]any
	ExpectWithOffset(1, json.Unmarshal(r.Body, &m)).To(Succeed())
	return m
}

// receiver is a local webhook endpoint. answer decides the status of each attempt from the
// number of attempts of the same webhook-id so far (1 for the first); it may sleep.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int) int
}

func newReceiver(answer func(n int) int) *receiver {
	r := &receiver{answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(r.handle))
	DeferCleanup(r.srv.Close)
	return r
}

// newReceiverOn is a receiver listening on addr (a port that refused connections before).
func newReceiverOn(addr string, answer func(n int) int) *receiver {
	r := &receiver{answer: answer}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.handle))
	l, err := net.Listen("tcp", addr)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	r.srv.Listener = l
	r.srv.Start()
	DeferCleanup(r.srv.Close)
	return r
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	n := 1
	for _, g := range r.got {
		if g.id() == req.Header.Get("webhook-id") {
			n++
		}
	}
	r.mu.Unlock()
	status := http.StatusOK
	if r.answer != nil {
		status = r.answer(n)
	}
	recorded := status
	if req.Context().Err() != nil {
		recorded = 0 // the sender gave up waiting: the answer never reached it
	}
	r.mu.Lock()
	r.got = append(r.got, received{Header: req.Header.Clone(), Body: body, At: time.Now(), Status: recorded})
	r.mu.Unlock()
	w.WriteHeader(status)
}

func (r *receiver) URL() string { return r.srv.URL + "/hooks" }

func (r *receiver) all() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// ofType returns the attempts of one event type.
func (r *receiver) ofType(typ string) []received {
	var out []received
	for _, g := range r.all() {
		if g.envelope()["type"] == typ {
			out = append(out, g)
		}
	}
	return out
}

// successIDs counts the 2xx answers per webhook-id.
func (r *receiver) successIDs() map[string]int {
	out := map[string]int{}
	for _, g := range r.all() {
		if g.Status >= 200 && g.Status <= 299 {
			out[g.id()]++
		}
	}
	return out
}

// subscribe gives the tenant's project an endpoint at url for events (none: every type).
func (t *tenant) subscribe(url string, events ...string) *store.WebhookEndpoint {
	e, err := core.Webhooks.SetEndpoint(context.Background(), t.ProjectID, url, events)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return e
}

// eventIDs returns the ids of the project's events (of one type, or all with "").
func (t *tenant) eventIDs(typ string) []string {
	evs, _, err := st.ListEvents(context.Background(), t.ProjectID, typ, store.Page{Limit: 100})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

// eventSchemas maps each event type to its schema in openapi.yaml.
var eventSchemas = map[string]string{
	"message.sent": "MessageSentEvent", "message.delivered": "MessageDeliveredEvent", "message.failed": "MessageFailedEvent",
	"message.received": "MessageReceivedEvent", "conversation.created": "ConversationCreatedEvent",
	"contact.opted_in": "ContactOptedInEvent", "contact.opted_out": "ContactOptedOutEvent",
	"campaign.approved": "CampaignApprovedEvent", "campaign.deactivated": "CampaignDeactivatedEvent",
	"phone_number.attached_to_campaign": "PhoneNumberAttachedToCampaignEvent",
	"link.followed":                     "LinkFollowedEvent", "call.ended": "CallEndedEvent",
	"recording.completed": "RecordingCompletedEvent", "voicemail.received": "VoicemailReceivedEvent",
}

// conformsTo checks a delivery body against a component schema of the contract.
func conformsTo(body []byte, schemaName string) error {
	spec, err := gen.GetSwagger()
	if err != nil {
		return err
	}
	ref, ok := spec.Components.Schemas[schemaName]
	if !ok {
		return errors.New("no schema " + schemaName)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	return ref.Value.VisitJSON(v, openapi3.MultiErrors(), openapi3.EnableFormatValidation())
}

// verifySvcSignature recomputes the deprecated svc-signature with secret.
func verifySvcSignature(h http.Header, body []byte, secret string) bool {
	parts := strings.Split(h.Get("svc-signature"), ",")
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "t=") {
		return false
	}
	ts := strings.TrimPrefix(parts[0], "t=")
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	Expect(err).NotTo(HaveOccurred())
	m := hmac.New(sha256.New, key)
	m.Write([]byte(ts + "."))
	m.Write(body)
	want := "v1=" + hex.EncodeToString(m.Sum(nil))
	for _, p := range parts[1:] {
		if hmac.Equal([]byte(p), []byte(want)) {
			return true
		}
	}
	return false
}

// expectSignedDelivery checks everything a receiver can check about a delivery.
func expectSignedDelivery(g received, secret string) {
	wh, err := standardwebhooks.NewWebhook(secret)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, wh.Verify(g.Body, g.Header)).To(Succeed(), "Standard Webhooks verification")
	ExpectWithOffset(1, verifySvcSignature(g.Header, g.Body, secret)).To(BeTrue(), "svc-signature: %s", g.Header.Get("svc-signature"))
	ExpectWithOffset(1, g.Header.Get("Content-Type")).To(Equal("application/json"))
	ExpectWithOffset(1, g.Header.Get("User-Agent")).To(HavePrefix("Switchboard-Webhooks/"))
	ExpectWithOffset(1, g.id()).To(MatchRegexp(`^evt_[0-7][0-9a-hjkmnp-tv-z]{25}$`))
	ts, err := strconv.ParseInt(g.Header.Get("webhook-timestamp"), 10, 64)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, time.Unix(ts, 0)).To(BeTemporally("~", time.Now(), time.Minute))
	ExpectWithOffset(1, g.envelope()).To(SatisfyAll(HaveLen(4), HaveKey("account_id"), HaveKey("type"), HaveKey("timestamp"), HaveKey("data")))
}

var _ = Describe("Webhooks", func() {
	var (
		t    *tenant
		acct string
		from string
	)
	BeforeEach(func() {
		t, acct, _, from = newSendingAccount()
	})

	// await waits for the receiver to have a delivery of typ and returns the first.
	await := func(r *receiver, typ string) received {
		EventuallyWithOffset(1, func() []received { return r.ofType(typ) }).WithTimeout(20 * time.Second).
			WithPolling(20 * time.Millisecond).ShouldNot(BeEmpty())
		return r.ofType(typ)[0]
	}

	Describe("every event type", func() {
		DescribeTable("is delivered signed, as its openapi.yaml schema describes, to an endpoint subscribed to it",
			func(typ string, trigger func(t *tenant, acct, from string)) {
				r := newReceiver(nil)
				e := t.subscribe(r.URL(), typ)
				trigger(t, acct, from)
				g := await(r, typ)
				expectSignedDelivery(g, e.Secret)
				Expect(conformsTo(g.Body, eventSchemas[typ])).To(Succeed(), "%s", g.Body)
				Expect(conformsTo(g.Body, "WebhookEvent")).To(Succeed(), "%s", g.Body)
				env := g.envelope()
				Expect(env).To(HaveKeyWithValue("type", typ))
				Expect(env).To(HaveKeyWithValue("account_id", acct))
				Expect(t.eventIDs(typ)).To(ContainElement(g.id()), "webhook-id is the event's id")
				// Only the subscribed type arrives.
				Consistently(func() []received { return r.all() }).WithTimeout(300 * time.Millisecond).
					Should(HaveEach(WithTransform(func(g received) any { return g.envelope()["type"] }, Equal(typ))))
			},
			Entry("message.sent (API send)", "message.sent", func(t *tenant, acct, from string) {
				t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Your order is ready"})
			}),
			Entry("message.delivered (API send, simulated receipt)", "message.delivered", func(t *tenant, acct, from string) {
				t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Your order is ready"})
			}),
			Entry("message.failed (API send to a landline)", "message.failed", func(t *tenant, acct, from string) {
				t.send(acct, map[string]any{"to": "+15005550003", "from": from, "body": "Your order is ready"})
			}),
			Entry("message.received (handset writes in)", "message.received", func(t *tenant, acct, from string) {
				handsetSends(newHandset(), from, "Is the shop open today?")
			}),
			Entry("conversation.created (first send to a handset)", "conversation.created", func(t *tenant, acct, from string) {
				t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Hello"})
			}),
			Entry("contact.opted_out (handset sends STOP)", "contact.opted_out", func(t *tenant, acct, from string) {
				handsetSends(newHandset(), from, "STOP")
			}),
			Entry("contact.opted_in (STOP, then START)", "contact.opted_in", func(t *tenant, acct, from string) {
				h := newHandset()
				handsetSends(h, from, "STOP")
				Eventually(func() []string { return t.eventIDs("contact.opted_out") }).WithTimeout(10 * time.Second).ShouldNot(BeEmpty())
				handsetSends(h, from, "START")
			}),
			Entry("campaign.approved (API campaign, simulated registry verdict)", "campaign.approved", func(t *tenant, acct, _ string) {
				id := t.createCampaign(acct, campaignBody())["id"].(string)
				forceVerdict(id, true)
			}),
			Entry("campaign.deactivated (API campaign, deactivated)", "campaign.deactivated", func(t *tenant, acct, _ string) {
				id := t.createCampaign(acct, campaignBody())["id"].(string)
				Expect(t.delete("/campaigns/" + id)).To(HaveStatus(http.StatusOK))
			}),
			Entry("phone_number.attached_to_campaign (API purchase and attach, then approval)", "phone_number.attached_to_campaign",
				func(t *tenant, acct, _ string) {
					cpn := t.createCampaign(acct, campaignBody())["id"].(string)
					n := t.buyNumber(acct, map[string]any{"area_code": "415"})["id"].(string)
					Expect(t.patch("/phone_numbers/"+n, map[string]any{"campaign_id": cpn})).To(HaveStatus(http.StatusOK))
					forceVerdict(cpn, true)
				}),
			Entry("link.followed (shortened link of a sent message, then GET /l/{code})", "link.followed", func(t *tenant, acct, from string) {
				code := t.shortenedLink(acct, from, "https://acme.example/offers?id=7")
				Expect(t.get("/l/" + code)).To(HaveStatus(http.StatusFound))
			}),
			Entry("call.ended (handset calls the account's number)", "call.ended", func(t *tenant, acct, from string) {
				handsetCalls(sim.Call{From: newHandset(), To: from, Answered: true, TalkSeconds: 12})
			}),
			Entry("recording.completed (handset leaves a voicemail)", "recording.completed", func(t *tenant, acct, from string) {
				handsetCalls(sim.Call{From: newHandset(), To: from, VoicemailSeconds: 3})
			}),
			Entry("voicemail.received (handset leaves a voicemail)", "voicemail.received", func(t *tenant, acct, from string) {
				handsetCalls(sim.Call{From: newHandset(), To: from, VoicemailSeconds: 3})
			}),
		)
	})

	Describe("signatures", func() {
		var (
			g      received
			secret string
		)
		BeforeEach(func() {
			r := newReceiver(nil)
			secret = t.subscribe(r.URL(), "message.sent").Secret
			t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Signed"})
			g = await(r, "message.sent")
		})

		It("verify with the official Standard Webhooks library and by recomputing svc-signature", func() {
			expectSignedDelivery(g, secret)
			Expect(secret).To(MatchRegexp(`^whsec_[A-Za-z0-9+/]{32}$`), "whsec_ and the base64 of 24 bytes")
		})

		It("fail for a tampered body", func() {
			tampered := []byte(strings.Replace(string(g.Body), "Signed", "Signet", 1))
			Expect(tampered).NotTo(Equal(g.Body))
			wh, _ := standardwebhooks.NewWebhook(secret)
			Expect(wh.Verify(tampered, g.Header)).To(MatchError(standardwebhooks.ErrNoMatchingSignature))
			Expect(verifySvcSignature(g.Header, tampered, secret)).To(BeFalse())
		})

		It("fail with a wrong secret", func() {
			other, err := webhooks.NewSecret()
			Expect(err).NotTo(HaveOccurred())
			wh, _ := standardwebhooks.NewWebhook(other)
			Expect(wh.Verify(g.Body, g.Header)).To(MatchError(standardwebhooks.ErrNoMatchingSignature))
			Expect(verifySvcSignature(g.Header, g.Body, other)).To(BeFalse())
		})

		It("fail with a stale timestamp, even when correctly signed for it", func() {
			stale := time.Now().Add(-10 * time.Minute)
			sig, _, err := webhooks.Sign([]string{secret}, g.id(), stale, g.Body)
			Expect(err).NotTo(HaveOccurred())
			h := g.Header.Clone()
			h.Set("webhook-timestamp", strconv.FormatInt(stale.Unix(), 10))
			h.Set("webhook-signature", sig)
			wh, _ := standardwebhooks.NewWebhook(secret)
			Expect(wh.Verify(g.Body, h)).To(MatchError(standardwebhooks.ErrMessageTooOld))
			Expect(wh.VerifyIgnoringTimestamp(g.Body, h)).To(Succeed(), "only the timestamp is wrong")
		})

		It("carry the old and the new secret for 24 hours after a rotation", func() {
			r := newReceiver(nil)
			old := t.subscribe(r.URL(), "message.sent")
			rotated, err := core.Webhooks.RotateSecret(context.Background(), old.ID)
			Expect(err).NotTo(HaveOccurred())
			Expect(rotated.Secret).NotTo(Equal(old.Secret))
			Expect(*rotated.PreviousSecretUntil).To(BeTemporally("~", clock.Now().Add(24*time.Hour), time.Minute))
			t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Rotated"})
			d := await(r, "message.sent")
			Expect(strings.Fields(d.Header.Get("webhook-signature"))).To(HaveLen(2))
			expectSignedDelivery(d, old.Secret)
			expectSignedDelivery(d, rotated.Secret)
		})
	})

	Describe("delivery", func() {
		It("retries a receiver that fails (500, timeout, connection refused) until it recovers: every event once as a success, with one webhook-id", func() {
			failing500 := newReceiver(func(n int) int {
				if n == 1 {
					return http.StatusInternalServerError
				}
				return http.StatusNoContent
			})
			slow := newReceiver(func(n int) int {
				if n == 1 {
					time.Sleep(webhookTestTimeout + 500*time.Millisecond)
				}
				return http.StatusOK
			})
			// A port nobody listens on yet.
			l, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			refusedAddr := l.Addr().String()
			Expect(l.Close()).To(Succeed())
			// The refused endpoint takes only the events of the send itself, which come moments
			// apart: every first attempt to it is made before the first retry (5 s later) comes due,
			// however slowly message.delivered follows.
			refused := t.subscribe("http://"+refusedAddr+"/hooks", webhooks.EventConversationCreated, webhooks.EventMessageSent)
			t.subscribe(failing500.URL())
			t.subscribe(slow.URL())
			metricsText := func() string { return scrape(t.api) }
			before := metricsText()

			start := time.Now()
			m := t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Retry me"})
			t.awaitStatus(m["id"].(string), "delivered")
			Eventually(func() []store.WebhookDelivery { return deliveriesTo(t, refused.ID) }).WithTimeout(10 * time.Second).
				Should(SatisfyAll(HaveLen(2), HaveEach(HaveField("Attempts", BeNumerically(">=", 1)))))
			for _, d := range deliveriesTo(t, refused.ID) {
				Expect(d.LastError).To(HaveValue(ContainSubstring("connection refused")))
				Expect(d.NextAttemptAt).To(HaveValue(BeTemporally("~", d.UpdatedAt.Add(5*time.Second), time.Second)))
			}
			recovered := newReceiverOn(refusedAddr, nil)

			events := t.eventIDs("")
			Expect(events).To(HaveLen(3), "message.sent, message.delivered, conversation.created")
			once := map[string]int{}
			for _, id := range events {
				once[id] = 1
			}
			for _, r := range []*receiver{failing500, slow} {
				Eventually(r.successIDs).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).Should(Equal(once))
			}
			sendEvents := map[string]int{}
			for _, typ := range []string{webhooks.EventConversationCreated, webhooks.EventMessageSent} {
				sendEvents[t.eventIDs(typ)[0]] = 1
			}
			Eventually(recovered.successIDs).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).Should(Equal(sendEvents))
			Expect(time.Since(start)).To(BeNumerically(">=", 5*time.Second), "the first retry waits 5 s")
			Consistently(failing500.successIDs).WithTimeout(time.Second).Should(Equal(once), "no delivery after a success")
			// Every attempt of an event carried the same webhook-id: two attempts per id, the
			// first failed.
			for _, r := range []*receiver{failing500, slow} {
				perID := map[string][]int{}
				for _, g := range r.all() {
					perID[g.id()] = append(perID[g.id()], g.Status)
				}
				Expect(perID).To(HaveLen(3))
				for _, statuses := range perID {
					Expect(statuses).To(HaveLen(2))
					Expect(statuses[1]).To(BeNumerically("<", 300))
				}
			}
			ds, err := core.Webhooks.Deliveries(context.Background(), t.ProjectID, false, 100)
			Expect(err).NotTo(HaveOccurred())
			Expect(ds).To(HaveLen(8))
			Expect(ds).To(HaveEach(SatisfyAll(HaveField("Status", store.DeliverySucceeded), HaveField("Attempts", 2))))

			By("counting every attempt by outcome in /metrics, and the lag of each success")
			after := metricsText()
			grew := func(series string) float64 { return metricValue(after, series) - metricValue(before, series) }
			attempts := func(outcome string) float64 {
				return grew(`switchboard_webhook_attempts_total{outcome="` + outcome + `"}`)
			}
			Expect(attempts("success")).To(BeNumerically(">=", 8))
			Expect(attempts("http_status")).To(BeNumerically(">=", 3))
			Expect(attempts("timeout")).To(BeNumerically(">=", 3))
			Expect(attempts("connection_refused")).To(BeNumerically(">=", 2))
			Expect(grew("switchboard_webhook_attempt_duration_seconds_count")).To(BeNumerically(">=", 16))
			Expect(grew("switchboard_webhook_delivery_lag_seconds_count")).To(BeNumerically(">=", 8))
			// The retried deliveries waited at least the first retry's 5 s.
			Expect(grew(`switchboard_webhook_delivery_lag_seconds_bucket{le="5"}`)).
				To(BeNumerically("<=", grew("switchboard_webhook_delivery_lag_seconds_count")-8))
		})

		It("does not follow redirects: a 3xx is a failed attempt", func() {
			target := newReceiver(nil)
			redirect := httptest.NewServer(http.RedirectHandler(target.URL(), http.StatusFound))
			DeferCleanup(redirect.Close)
			e := t.subscribe(redirect.URL, "message.sent")
			t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Redirect"})
			Eventually(func() []store.WebhookDelivery { return deliveriesTo(t, e.ID) }).WithTimeout(10 * time.Second).
				Should(ConsistOf(SatisfyAll(HaveField("Attempts", 1), HaveField("Status", store.DeliveryPending),
					HaveField("LastStatus", HaveValue(Equal(http.StatusFound))))))
			Expect(target.all()).To(BeEmpty())
		})

		It("sends nothing to a disabled endpoint, and resumes once it is enabled", func() {
			on, off := newReceiver(nil), newReceiver(nil)
			t.subscribe(on.URL(), "message.sent")
			disabled := t.subscribe(off.URL(), "message.sent")
			_, err := core.Webhooks.SetEnabled(context.Background(), disabled.ID, false)
			Expect(err).NotTo(HaveOccurred())
			t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Only one"})
			await(on, "message.sent")
			Consistently(off.all).WithTimeout(time.Second).Should(BeEmpty())
			Expect(deliveriesTo(t, disabled.ID)).To(BeEmpty())

			_, err = core.Webhooks.SetEnabled(context.Background(), disabled.ID, true)
			Expect(err).NotTo(HaveOccurred())
			t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Both"})
			Eventually(off.all).WithTimeout(10 * time.Second).Should(HaveLen(1))
		})

		It("replays a delivery and an event with the same webhook-id", func() {
			r := newReceiver(nil)
			e := t.subscribe(r.URL(), "message.sent")
			t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Again"})
			first := await(r, "message.sent")
			ds := deliveriesTo(t, e.ID)
			Expect(ds).To(HaveLen(1))

			replayed, err := core.Webhooks.Replay(context.Background(), ds[0].ID)
			Expect(err).NotTo(HaveOccurred())
			Expect(replayed).To(HaveLen(1))
			Eventually(r.all).WithTimeout(10 * time.Second).Should(HaveLen(2))
			_, err = core.Webhooks.Replay(context.Background(), first.id())
			Expect(err).NotTo(HaveOccurred())
			Eventually(r.all).WithTimeout(10 * time.Second).Should(HaveLen(3))
			for _, g := range r.all() {
				Expect(g.id()).To(Equal(first.id()))
				Expect(g.Body).To(Equal(first.Body), "the same payload")
				expectSignedDelivery(g, e.Secret)
			}
			_, err = core.Webhooks.Replay(context.Background(), "msg_nope")
			Expect(err).To(MatchError(ContainSubstring("neither a delivery")))
		})
	})
})

// deliveriesTo lists the deliveries of the tenant's project to one endpoint.
func deliveriesTo(t *tenant, endpointID string) []store.WebhookDelivery {
	ds, err := core.Webhooks.Deliveries(context.Background(), t.ProjectID, false, 100)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	var out []store.WebhookDelivery
	for _, d := range ds {
		if d.EndpointID == endpointID {
			out = append(out, d)
		}
	}
	return out
}
