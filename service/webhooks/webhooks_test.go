package webhooks_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/switchboard/switchboard/kit"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// The webhook specs here drive the Webhooks service alone over a real database, with their own
// job workers and clock: the retry schedule, the 5-day rule, the SSRF guard and restarts. The
// delivery of each event type through the whole API is specified in server/webhooks_test.go.

// fakeClock is a clock that only moves when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// hook is one request a receiver got.
type hook struct {
	Header http.Header
	Body   []byte
}

// hookReceiver is a local endpoint whose answer each spec decides.
type hookReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []hook
	answer func() int
}

func newHookReceiver(answer func() int) *hookReceiver {
	r := &hookReceiver{answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, hook{Header: req.Header.Clone(), Body: body})
		r.mu.Unlock()
		w.WriteHeader(r.answer())
	}))
	DeferCleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) hooks() []hook {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hook(nil), r.got...)
}

var _ = Describe("Webhook delivery", func() {
	var (
		ctx     context.Context
		st      *store.Store
		project string
	)
	BeforeEach(func() {
		ctx = context.Background()
		var cleanup func()
		var err error
		st, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cleanup)
		p, err := st.CreateProject(ctx, "webhooks")
		Expect(err).NotTo(HaveOccurred())
		project = p.ID
	})

	// startWorkers runs wh's deliverer until the spec ends (or the caller stops it first).
	startWorkers := func(wh *webhooks.Service) *kit.Runner {
		r := wh.StartDeliveries(context.WithoutCancel(ctx))
		DeferCleanup(func() { _ = r.StopAndCancel(context.Background()) })
		return r
	}
	// emitFor records an event of a project as the features do: in a transaction, with its
	// deliveries.
	emitFor := func(projectID string) string {
		var id string
		Expect(st.Tx(ctx, func(tx *store.Store) error {
			e, err := store.NewEvent(projectID, store.NewID("acct"), "contact.opted_in", map[string]any{"id": store.NewID("ctc")})
			if err != nil {
				return err
			}
			evs := []store.Event{e}
			err = webhooks.Publish(ctx, tx, evs...)
			id = evs[0].ID
			return err
		})).To(Succeed())
		return id
	}
	emit := func() string { return emitFor(project) }
	delivery := func(eventID string) func() store.WebhookDelivery {
		return func() store.WebhookDelivery {
			ds, err := st.WebhookDeliveriesOfEvent(ctx, eventID)
			Expect(err).NotTo(HaveOccurred())
			if len(ds) == 0 {
				return store.WebhookDelivery{}
			}
			return ds[len(ds)-1]
		}
	}

	It("retries on the schedule 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h", func() {
		Expect(webhooks.DefaultRetrySchedule()).To(Equal([]time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute,
			2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}))
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		next, ok := webhooks.NextAttempt(webhooks.DefaultRetrySchedule(), 4, at)
		Expect(ok).To(BeTrue())
		Expect(next).To(Equal(at.Add(2 * time.Hour)))
		_, ok = webhooks.NextAttempt(webhooks.DefaultRetrySchedule(), 8, at)
		Expect(ok).To(BeFalse(), "the 8th attempt is the last")
	})

	It("schedules each retry by the injected clock, fails the delivery after the last attempt, disables an endpoint failing for 5 days, and replays the failures", func() {
		// The deliverer claims by the injected clock, which runs a minute ahead of the real one:
		// a delivery the store makes due at once (by the real clock) is due for it, and each
		// retry comes due when the spec moves the clock to its time, so the whole 27-hour
		// schedule runs in moments, each attempt scheduled exactly where the clock says.
		clk := &fakeClock{t: time.Now().UTC().Add(time.Minute).Truncate(time.Second)}
		start := clk.Now()
		var healthy atomic.Bool
		gate := make(chan struct{}, 1)
		r := newHookReceiver(func() int {
			if healthy.Load() {
				return http.StatusOK
			}
			<-gate
			return http.StatusServiceUnavailable
		})
		wh, err := webhooks.New(webhooks.Config{Store: st, AllowPrivate: true, Timeout: 5 * time.Second, Now: clk.Now})
		Expect(err).NotTo(HaveOccurred())
		startWorkers(wh)
		e, err := wh.SetEndpoint(ctx, project, r.srv.URL, nil)
		Expect(err).NotTo(HaveOccurred())

		evt := emit()
		schedule := webhooks.DefaultRetrySchedule()
		for k := 1; k <= 8; k++ {
			gate <- struct{}{}
			Eventually(delivery(evt)).WithTimeout(10*time.Second).Should(HaveField("Attempts", k), "attempt %d", k)
			d := delivery(evt)()
			Expect(d.LastStatus).To(HaveValue(Equal(http.StatusServiceUnavailable)))
			if k == 8 {
				Expect(d.Status).To(Equal(store.DeliveryFailed))
				Expect(d.NextAttemptAt).To(BeNil())
				break
			}
			Expect(d.Status).To(Equal(store.DeliveryPending))
			Expect(*d.NextAttemptAt).To(BeTemporally("==", clk.Now().Add(schedule[k-1])), "attempt %d", k)
			// The queue holds the next attempt until exactly that time.
			Consistently(delivery(evt)).WithTimeout(300*time.Millisecond).Should(HaveField("Attempts", k), "attempt %d waits for its time", k)
			clk.Advance(schedule[k-1])
		}
		Expect(r.hooks()).To(HaveLen(8))
		for _, h := range r.hooks() {
			Expect(h.Header.Get("webhook-id")).To(Equal(evt), "one webhook-id on every attempt")
		}
		ep, err := st.GetWebhookEndpoint(ctx, e.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(ep.Enabled).To(BeTrue(), "27.6 hours of failures are not 5 days")
		Expect(ep.FailingSince).To(HaveValue(BeTemporally("==", start)))

		// Five days into the failure streak, the next failure disables the endpoint, and the
		// delivery still pending on it fails at its next attempt.
		clk.Advance(5*24*time.Hour - 27*time.Hour)
		second := emit()
		gate <- struct{}{}
		Eventually(func() bool { ep, _ := st.GetWebhookEndpoint(ctx, e.ID); return ep.Enabled }).WithTimeout(10 * time.Second).Should(BeFalse())
		clk.Advance(schedule[0]) // the retry of the second event's delivery comes due
		ep, _ = st.GetWebhookEndpoint(ctx, e.ID)
		Expect(ep.DisabledReason).To(HaveValue(ContainSubstring("failing continuously")))
		Eventually(delivery(second)).WithTimeout(10 * time.Second).Should(SatisfyAll(HaveField("Status", store.DeliveryFailed),
			HaveField("LastError", HaveValue(Equal("endpoint disabled")))))
		Expect(r.hooks()).To(HaveLen(9))
		failed, err := wh.Deliveries(ctx, project, true, 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(failed).To(HaveLen(2))
		Expect(metricOf(wh, "switchboard_webhook_attempts_total", "outcome", "http_status")).To(BeEquivalentTo(9))
		Expect(metricOf(wh, "switchboard_webhook_attempts_total", "outcome", "success")).To(BeZero())
		Expect(metricOf(wh, "switchboard_webhook_attempt_duration_seconds")).To(BeEquivalentTo(9))
		// Both counters follow their commits.
		Eventually(func() float64 { return metricOf(wh, "switchboard_webhook_deliveries_failed_total") }).
			WithTimeout(5*time.Second).Should(BeEquivalentTo(2), "after the last attempt, and on the disabled endpoint")
		Eventually(func() float64 { return metricOf(wh, "switchboard_webhook_endpoints_disabled_total") }).
			WithTimeout(5 * time.Second).Should(BeEquivalentTo(1))

		// The operator fixes the receiver, enables the endpoint and replays the failures.
		healthy.Store(true)
		_, err = wh.SetEnabled(ctx, e.ID, true)
		Expect(err).NotTo(HaveOccurred())
		replayed, err := wh.ReplaySince(ctx, project, start.Add(-time.Hour))
		Expect(err).NotTo(HaveOccurred())
		Expect(replayed).To(HaveLen(2))
		Eventually(func() []store.WebhookDelivery { ds, _ := wh.Deliveries(ctx, project, false, 10); return ds }).
			WithTimeout(10 * time.Second).Should(ContainElements(
			SatisfyAll(HaveField("EventID", evt), HaveField("Status", store.DeliverySucceeded)),
			SatisfyAll(HaveField("EventID", second), HaveField("Status", store.DeliverySucceeded))))
		Expect(r.hooks()).To(HaveLen(11))
		Eventually(func() float64 { return metricOf(wh, "switchboard_webhook_attempts_total", "outcome", "success") }).
			WithTimeout(5 * time.Second).Should(BeEquivalentTo(2))
		Expect(metricOf(wh, "switchboard_webhook_delivery_lag_seconds")).To(BeEquivalentTo(2), "one lag per success")
	})

	It("signs with the new secret only once the rotation's 24 hours have passed", func() {
		clk := &fakeClock{t: time.Now().UTC()}
		r := newHookReceiver(func() int { return http.StatusOK })
		wh, err := webhooks.New(webhooks.Config{Store: st, AllowPrivate: true, Now: clk.Now})
		Expect(err).NotTo(HaveOccurred())
		startWorkers(wh)
		e, err := wh.SetEndpoint(ctx, project, r.srv.URL, nil)
		Expect(err).NotTo(HaveOccurred())
		rotated, err := wh.RotateSecret(ctx, e.ID)
		Expect(err).NotTo(HaveOccurred())
		clk.Advance(webhooks.SecretGrace + time.Second)
		emit()
		Eventually(r.hooks).WithTimeout(10 * time.Second).Should(HaveLen(1))
		h := r.hooks()[0]
		Expect(strings.Fields(h.Header.Get("webhook-signature"))).To(HaveLen(1))
		newKey, _ := standardwebhooks.NewWebhook(rotated.Secret)
		oldKey, _ := standardwebhooks.NewWebhook(e.Secret)
		Expect(newKey.VerifyIgnoringTimestamp(h.Body, h.Header)).To(Succeed())
		Expect(oldKey.VerifyIgnoringTimestamp(h.Body, h.Header)).To(MatchError(standardwebhooks.ErrNoMatchingSignature))
	})

	Describe("SSRF guard", func() {
		// One address inside each range of the IANA special-purpose registries that is not
		// globally reachable (and a few neighbours that are), then public addresses.
		DescribeTable("tells public addresses from the others",
			func(addr string, public bool) {
				Expect(webhooks.PublicAddr(netip.MustParseAddr(addr))).To(Equal(public))
			},
			Entry("0.0.0.0/8 this network", "0.1.2.3", false),
			Entry("0.0.0.0/32 this host", "0.0.0.0", false),
			Entry("10.0.0.0/8 private", "10.1.2.3", false),
			Entry("100.64.0.0/10 shared address space", "100.127.255.254", false),
			Entry("127.0.0.0/8 loopback", "127.0.0.1", false),
			Entry("127.0.0.0/8 loopback, elsewhere", "127.1.2.3", false),
			Entry("169.254.0.0/16 link-local", "169.254.10.10", false),
			Entry("169.254.169.254 cloud metadata", "169.254.169.254", false),
			Entry("172.16.0.0/12 private", "172.31.255.1", false),
			Entry("192.0.0.0/24 IETF protocol assignments", "192.0.0.200", false),
			Entry("192.0.0.0/29 IPv4 service continuity", "192.0.0.1", false),
			Entry("192.0.0.8/32 dummy", "192.0.0.8", false),
			Entry("192.0.0.9/32 PCP anycast (the whole /24 is refused)", "192.0.0.9", false),
			Entry("192.0.0.170/32 NAT64 discovery", "192.0.0.170", false),
			Entry("192.0.2.0/24 TEST-NET-1", "192.0.2.1", false),
			Entry("192.88.99.0/24 6to4 relay anycast", "192.88.99.1", false),
			Entry("192.168.0.0/16 private", "192.168.1.1", false),
			Entry("198.18.0.0/15 benchmarking", "198.19.255.1", false),
			Entry("198.51.100.0/24 TEST-NET-2", "198.51.100.7", false),
			Entry("203.0.113.0/24 TEST-NET-3", "203.0.113.9", false),
			Entry("224.0.0.0/4 multicast", "239.255.255.250", false),
			Entry("240.0.0.0/4 reserved", "250.1.2.3", false),
			Entry("255.255.255.255/32 limited broadcast", "255.255.255.255", false),
			Entry("::/128 unspecified", "::", false),
			Entry("::1/128 loopback", "::1", false),
			Entry("::/96 IPv4-compatible", "::10.0.0.1", false),
			Entry("::/96 IPv4-compatible, of a public address", "::93.184.216.34", false),
			Entry("::ffff:0:0/96 IPv4-mapped loopback", "::ffff:127.0.0.1", false),
			Entry("::ffff:0:0/96 IPv4-mapped, of a public address", "::ffff:93.184.216.34", false),
			Entry("::ffff:0:0:0/96 IPv4-translated", "::ffff:0:a00:1", false),
			Entry("64:ff9b::/96 NAT64 of a private address", "64:ff9b::10.0.0.1", false),
			Entry("64:ff9b::/96 NAT64 of loopback", "64:ff9b::7f00:1", false),
			Entry("64:ff9b:1::/48 local-use NAT64", "64:ff9b:1::93.184.216.34", false),
			Entry("100::/64 discard-only", "100::1", false),
			Entry("100:0:0:1::/64 dummy prefix", "100:0:0:1::1", false),
			Entry("2001::/23 IETF protocol assignments", "2001:1ff::1", false),
			Entry("2001:1::1/128 PCP anycast (the whole /23 is refused)", "2001:1::1", false),
			Entry("2001::/32 Teredo of loopback", "2001:0:4136:e378:8000:63bf:80ff:fffe", false),
			Entry("2001::/32 Teredo", "2001:0:5ef5:79fd:0:59d:a0e5:ba1", false),
			Entry("2001:2::/48 benchmarking", "2001:2::1", false),
			Entry("2001:3::/32 AMT", "2001:3::1", false),
			Entry("2001:4:112::/48 AS112-v6", "2001:4:112::1", false),
			Entry("2001:10::/28 ORCHID", "2001:10::1", false),
			Entry("2001:20::/28 ORCHIDv2", "2001:20::1", false),
			Entry("2001:30::/28 drone remote ID", "2001:30::1", false),
			Entry("2001:db8::/32 documentation", "2001:db8::1", false),
			Entry("2002::/16 6to4 of loopback", "2002:7f00:1::1", false),
			Entry("2002::/16 6to4 of a public address", "2002:5db8:d822::1", false),
			Entry("3fff::/20 documentation", "3fff:fff::1", false),
			Entry("5f00::/16 segment routing", "5f00::1", false),
			Entry("fc00::/7 unique-local", "fc00::1", false),
			Entry("fc00::/7 unique-local, fd", "fd12:3456::1", false),
			Entry("fd00:ec2::254 AWS metadata", "fd00:ec2::254", false),
			Entry("fe80::/10 link-local", "fe80::1", false),
			Entry("fe80::/10 link-local with a zone", "fe80::1%eth0", false),
			Entry("fec0::/10 site-local", "fec0::1", false),
			Entry("ff00::/8 multicast", "ff02::1", false),
			Entry("ff00::/8 global multicast", "ff0e::1", false),
			Entry("public IPv4", "93.184.216.34", true),
			Entry("public IPv4 next to a refused range", "100.128.0.1", true),
			Entry("public IPv4 next to benchmarking", "198.20.0.1", true),
			Entry("public IPv4 below multicast", "223.255.255.254", true),
			Entry("public IPv6", "2606:2800:220:1:248:1893:25c8:1946", true),
			Entry("public IPv6 next to the IETF block", "2001:200::1", true),
			Entry("64:ff9b::/96 NAT64 of a public address", "64:ff9b::93.184.216.34", true),
		)

		DescribeTable("refuses to connect to a literal address of a refused range, before connecting",
			func(rawURL string) {
				_, err := webhooks.NewClient(false, 5*time.Second).Get(rawURL)
				var refused *webhooks.RefusedTargetError
				Expect(errors.As(err, &refused)).To(BeTrue(), "%v", err)
			},
			Entry("6to4", "http://[2002:7f00:1::1]:8080/hook"),
			Entry("Teredo", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook"),
			Entry("IPv4-mapped", "http://[::ffff:127.0.0.1]:8080/hook"),
			Entry("NAT64 of loopback", "http://[64:ff9b::7f00:1]/hook"),
			Entry("benchmarking", "http://198.18.0.1/hook"),
			Entry("shared address space", "http://100.64.0.1/hook"),
		)

		It("refuses loopback targets when private targets are not allowed, on the resolved address at connect time", func() {
			r := newHookReceiver(func() int { return http.StatusOK })
			wh, err := webhooks.New(webhooks.Config{Store: st, AllowPrivate: false})
			Expect(err).NotTo(HaveOccurred())
			startWorkers(wh)
			_, err = wh.SetEndpoint(ctx, project, r.srv.URL, nil) // http://127.0.0.1:port
			Expect(err).To(MatchError(ContainSubstring("private, loopback or link-local")))
			port := r.srv.URL[strings.LastIndex(r.srv.URL, ":")+1:]
			_, err = wh.SetEndpoint(ctx, project, "http://localhost:"+port, nil)
			Expect(err).To(HaveOccurred())

			// A name that resolves to loopback (as after DNS rebinding) gets past any check of the
			// URL; the dialer still refuses the address it resolved to.
			now := time.Now().UTC()
			sneaky := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: project,
				URL: "http://localhost:" + port + "/hooks", Secret: "whsec_" + strings.Repeat("A", 32), Enabled: true, CreatedAt: now, UpdatedAt: now}
			Expect(st.CreateWebhookEndpoint(ctx, sneaky)).To(Succeed())
			evt := emit()
			Eventually(delivery(evt)).WithTimeout(10 * time.Second).Should(SatisfyAll(HaveField("Attempts", 1),
				HaveField("LastError", HaveValue(ContainSubstring("refused: ")))))
			Expect(r.hooks()).To(BeEmpty())
			Expect(metricOf(wh, "switchboard_webhook_attempts_total", "outcome", "refused_target")).To(BeEquivalentTo(1))
		})
	})

	It("keeps an endpoint that never answers from holding the workers other projects' endpoints need", func() {
		var inFlight, most atomic.Int64
		stop := make(chan struct{})
		stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			_, _ = io.Copy(io.Discard, req.Body)
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			select {
			case <-req.Context().Done():
			case <-stop:
			}
			inFlight.Add(-1)
		}))
		DeferCleanup(stalled.Close)
		DeferCleanup(func() { close(stop) }) // runs first: the stalled requests end
		healthy := newHookReceiver(func() int { return http.StatusNoContent })
		wh, err := webhooks.New(webhooks.Config{Store: st, AllowPrivate: true, Timeout: 10 * time.Second,
			EndpointConcurrency: 4, SlowEndpointConcurrency: 2, BreakerThreshold: 1000})
		Expect(err).NotTo(HaveOccurred())
		_, err = wh.SetEndpoint(ctx, project, stalled.URL, nil)
		Expect(err).NotTo(HaveOccurred())
		other, err := st.CreateProject(ctx, "another tenant")
		Expect(err).NotTo(HaveOccurred())
		_, err = wh.SetEndpoint(ctx, other.ID, healthy.srv.URL, nil)
		Expect(err).NotTo(HaveOccurred())

		// The stalled endpoint's 40 events come first in the queue, then the other tenant's 20;
		// the workers (20 of them) could all wait on the stalled endpoint for 10 s each.
		var stalledEvents []string
		for range 40 {
			stalledEvents = append(stalledEvents, emit())
		}
		want := map[string]bool{}
		for range 20 {
			want[emitFor(other.ID)] = true
		}
		startWorkers(wh)
		Eventually(func() map[string]bool {
			got := map[string]bool{}
			for _, h := range healthy.hooks() {
				got[h.Header.Get("webhook-id")] = true
			}
			return got
		}).WithTimeout(30 * time.Second).Should(Equal(want))
		for _, id := range stalledEvents {
			Expect(delivery(id)()).To(HaveField("Attempts", 0), "the other tenant's webhooks all arrived before the stalled endpoint's first attempts ended")
		}
		Expect(most.Load()).To(BeNumerically("<=", 4), "never more attempts in flight to an endpoint than its bound")
		// Once its attempts have taken a second, the endpoint counts as slow: the attempts beyond
		// its bound stop waiting for a slot and go back to the queue.
		Eventually(func() float64 { return metricOf(wh, "switchboard_webhook_attempts_deferred_total") }).
			WithTimeout(10*time.Second).Should(BeNumerically(">", 0), "the stalled endpoint's attempts beyond its bound went back to the queue")
	})

	It("stops sending to an endpoint that leaves its attempts unanswered, and resumes with a probe once the cool-down has passed", func() {
		clk := &fakeClock{t: time.Now().UTC().Add(time.Minute)} // ahead of the store's clock: new deliveries are due
		var answering atomic.Bool
		r := newHookReceiver(func() int {
			if !answering.Load() {
				time.Sleep(3 * time.Second) // past the sender's timeout
			}
			return http.StatusOK
		})
		// One attempt at a time, so that exactly two are sent before the breaker opens; retries
		// after 10 s, and the breaker's cool-down on the spec's clock.
		schedule := make([]time.Duration, 7)
		for i := range schedule {
			schedule[i] = 10 * time.Second
		}
		wh, err := webhooks.New(webhooks.Config{Store: st, AllowPrivate: true, Timeout: time.Second,
			EndpointConcurrency: 1, BreakerThreshold: 2, BreakerCooldown: time.Second, Now: clk.Now, RetrySchedule: schedule})
		Expect(err).NotTo(HaveOccurred())
		_, err = wh.SetEndpoint(ctx, project, r.srv.URL, nil)
		Expect(err).NotTo(HaveOccurred())
		startWorkers(wh)
		firstAttempt := func(id string) func() *string {
			return func() *string {
				if d := delivery(id)(); d.Attempts == 1 {
					return d.LastError
				}
				return nil
			}
		}

		unanswered := []string{emit(), emit()}
		for _, id := range unanswered {
			Eventually(firstAttempt(id)).WithTimeout(10 * time.Second).Should(HaveValue(Equal("no answer within 1s")))
		}
		failedFast := []string{emit(), emit()}
		for _, id := range failedFast {
			Eventually(firstAttempt(id)).WithTimeout(5 * time.Second).Should(HaveValue(
				HavePrefix("not sent: the endpoint left 2 attempts in a row unanswered within 1s")))
		}
		Expect(r.hooks()).To(HaveLen(2), "nothing sent while the breaker is open")
		Expect(metricOf(wh, "switchboard_webhook_attempts_total", "outcome", "breaker_open")).To(BeEquivalentTo(2))

		// The endpoint recovers and the cool-down passes: the next attempt is the probe, whose
		// answer closes the breaker; the retries then go out as usual.
		answering.Store(true)
		clk.Advance(time.Second)
		probe := emit()
		Eventually(delivery(probe)).WithTimeout(5 * time.Second).Should(SatisfyAll(
			HaveField("Status", store.DeliverySucceeded), HaveField("Attempts", 1)))
		clk.Advance(schedule[0]) // the failed attempts' retries come due
		events := append(append([]string{probe}, unanswered...), failedFast...)
		Eventually(func() []store.WebhookDelivery {
			var ds []store.WebhookDelivery
			for _, id := range events {
				ds = append(ds, delivery(id)())
			}
			return ds
		}).WithTimeout(30 * time.Second).Should(HaveEach(HaveField("Status", store.DeliverySucceeded)))
		sent := map[string]int{}
		for _, h := range r.hooks() {
			sent[h.Header.Get("webhook-id")]++
		}
		Expect(sent).To(Equal(map[string]int{probe: 1, unanswered[0]: 2, unanswered[1]: 2, failedFast[0]: 1, failedFast[1]: 1}),
			"the unanswered two again, the two failed without a request once")
	})

	It("loses no delivery when the workers are stopped mid-flight and others take over", func() {
		var inFlight atomic.Int64
		r := newHookReceiver(func() int {
			inFlight.Add(1)
			time.Sleep(150 * time.Millisecond)
			return http.StatusOK
		})
		wh, err := webhooks.New(webhooks.Config{Store: st, AllowPrivate: true})
		Expect(err).NotTo(HaveOccurred())
		_, err = wh.SetEndpoint(ctx, project, r.srv.URL, nil)
		Expect(err).NotTo(HaveOccurred())
		const n = 100
		events := map[string]bool{}
		for range n {
			events[emit()] = true
		}
		succeeded := func() int {
			ds, _ := wh.Deliveries(ctx, project, false, n+10)
			done := 0
			for _, d := range ds {
				if d.Status == store.DeliverySucceeded {
					done++
				}
			}
			return done
		}
		first := startWorkers(wh)
		Eventually(inFlight.Load).WithTimeout(10 * time.Second).Should(BeNumerically(">=", 10))
		// Stop as a dying instance would: running attempts are cancelled mid-request.
		Expect(first.StopAndCancel(ctx)).To(Succeed())
		before := succeeded()
		Expect(before).To(BeNumerically("<", n), "the first workers did not finish everything")

		startWorkers(wh)
		Eventually(succeeded).WithTimeout(30 * time.Second).Should(Equal(n))
		got := map[string]bool{}
		for _, h := range r.hooks() {
			got[h.Header.Get("webhook-id")] = true
		}
		Expect(got).To(Equal(events), "every event reached the receiver")
		GinkgoWriter.Printf("%d requests for %d events: %d recorded delivered before the stop\n", len(r.hooks()), n, before)
	})
})

// metricOf gathers wh's metrics and returns the one named name whose labels include the given
// name/value pairs: a counter's value, or a histogram's count of observations; 0 when absent.
func metricOf(wh *webhooks.Service, name string, labels ...string) float64 {
	reg := prometheus.NewRegistry()
	reg.MustRegister(wh.Collectors()...)
	families, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue metrics
				}
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
