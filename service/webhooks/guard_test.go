package webhooks

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// These specs drive the endpoint guard alone, on clocks that move only when told; the specs in
// webhooks_test.go show it at work in real deliveries.
var _ = Describe("The webhook endpoint guard", func() {
	var (
		g     *endpointGuard
		mu    sync.Mutex
		clock time.Time // real time, which times attempts
		at    time.Time // the retry clock, on which breakers cool down
		ctx   context.Context
	)
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	later := func(d time.Duration) { mu.Lock(); at = at.Add(d); mu.Unlock() }
	BeforeEach(func() {
		ctx = context.Background()
		clock = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		at = clock.Add(-7 * 24 * time.Hour)
		// Bounds: 3 attempts in flight to a quick endpoint, 2 to a slow one; the breaker opens
		// after 2 unanswered attempts in a row, for 30 s.
		g = newEndpointGuard(3, 2, 2, 30*time.Second, func() time.Time { mu.Lock(); defer mu.Unlock(); return at })
		g.clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	})
	// verdict returns enter's verdict on an attempt, leaving any pass it got in flight.
	verdict := func(endpoint string) int {
		_, v, _ := g.enter(ctx, endpoint)
		return v
	}
	// through lets an attempt through at once, failing the spec otherwise.
	through := func(endpoint string) *pass {
		p, v, _ := g.enter(ctx, endpoint)
		ExpectWithOffset(1, v).To(Equal(sendNow), "let through")
		return p
	}
	// attempt makes one attempt that takes took and ends as outcome.
	attempt := func(endpoint string, took time.Duration, outcome int) {
		p := through(endpoint)
		advance(took)
		p.leave(outcome)
	}
	breaker := func(endpoint string) (open bool, until time.Time) {
		g.mu.Lock()
		defer g.mu.Unlock()
		s := g.endpoints[endpoint]
		if s == nil || s.openUntil.IsZero() {
			return false, time.Time{}
		}
		return true, s.openUntil
	}

	It("lets a quick endpoint's attempts through up to its bound; the next waits for a slot, not for the queue", func() {
		held := []*pass{through("whe_a"), through("whe_a"), through("whe_a")}
		entered := make(chan *pass, 1)
		go func() {
			p, _, _ := g.enter(ctx, "whe_a")
			entered <- p
		}()
		Consistently(entered).WithTimeout(250 * time.Millisecond).ShouldNot(Receive())
		through("whe_b").leave(answered) // another endpoint is not held up
		held[0].leave(answered)
		Eventually(entered).Should(Receive(Not(BeNil())))
	})

	It("wakes one attempt waiting for a slot at each leave, in the order they came", func() {
		held := []*pass{through("whe_a"), through("whe_a"), through("whe_a")}
		waiting := func() int {
			g.mu.Lock()
			defer g.mu.Unlock()
			return g.endpoints["whe_a"].waiting
		}
		first, second := make(chan *pass, 1), make(chan *pass, 1)
		go func() { p, _, _ := g.enter(ctx, "whe_a"); first <- p }()
		Eventually(waiting).Should(Equal(1))
		go func() { p, _, _ := g.enter(ctx, "whe_a"); second <- p }()
		Eventually(waiting).Should(Equal(2))
		held[0].leave(answered)
		Eventually(first).Should(Receive(Not(BeNil())))
		Consistently(second).WithTimeout(250*time.Millisecond).ShouldNot(Receive(), "one slot, one attempt")
		held[1].leave(answered)
		Eventually(second).Should(Receive(Not(BeNil())))
		g.mu.Lock()
		defer g.mu.Unlock()
		Expect(g.endpoints["whe_a"].waiters).To(BeEmpty())
		Expect(g.endpoints["whe_a"].inFlight).To(HaveLen(3))
	})

	It("sends a slow endpoint's attempts beyond its tighter bound back to the queue", func() {
		for range 3 {
			attempt("whe_a", 3*time.Second, answered)
		}
		for _, p := range []*pass{through("whe_a"), through("whe_a"), through("whe_a")} { // quick still
			p.leave(abandoned)
		}
		attempt("whe_a", 3*time.Second, answered) // a second or more on average: slow
		held := []*pass{through("whe_a"), through("whe_a")}
		Expect(verdict("whe_a")).To(Equal(sendLater), "two in flight are a slow endpoint's bound")
		held[0].leave(answered)
		through("whe_a")
	})

	It("counts as slow an endpoint whose attempts stall, before any of them ends", func() {
		through("whe_a")
		through("whe_a")
		advance(400 * time.Millisecond)
		third := through("whe_a") // two attempts in flight for less than half a second: still quick
		advance(200 * time.Millisecond)
		Expect(verdict("whe_a")).To(Equal(sendLater), "two attempts in flight for half a second: a stall")
		third.leave(answered)
		Expect(verdict("whe_a")).To(Equal(sendNow), "it answered just now: not stalled")
		advance(500 * time.Millisecond)
		Expect(verdict("whe_a")).To(Equal(sendLater), "no answer for half a second again")
	})

	It("does not take a quick endpoint for slow after a lone timeout, but does after a few", func() {
		for range 5 {
			attempt("whe_a", 20*time.Millisecond, answered)
		}
		attempt("whe_a", 15*time.Second, unanswered)
		held := []*pass{through("whe_a"), through("whe_a"), through("whe_a")}
		for _, p := range held {
			advance(15 * time.Second)
			p.leave(answered) // slow answers: the breaker stays closed
		}
		through("whe_a")
		through("whe_a")
		Expect(verdict("whe_a")).To(Equal(sendLater), "slow after four attempts of 15 s in a row")
	})

	It("opens the breaker after the threshold of unanswered attempts in a row, probes once cooled down, and closes on an answer", func() {
		attempt("whe_a", 15*time.Second, unanswered)
		Expect(breaker("whe_a")).To(BeFalse(), "one unanswered attempt")
		attempt("whe_a", 15*time.Second, answered)
		attempt("whe_a", 15*time.Second, unanswered)
		Expect(breaker("whe_a")).To(BeFalse(), "an answer in between starts the count again")
		attempt("whe_a", 15*time.Second, unanswered)
		_, v, until := g.enter(ctx, "whe_a")
		Expect(v).To(Equal(breakerOn))
		Expect(until).To(Equal(at.Add(30 * time.Second)))
		Expect(verdict("whe_b")).To(Equal(sendNow), "another endpoint")

		later(30 * time.Second)
		probe := through("whe_a")
		Expect(probe.probe).To(BeTrue(), "the first attempt after the cool-down is the probe")
		Expect(verdict("whe_a")).To(Equal(breakerOn), "while the probe is out, the others still fail")
		advance(15 * time.Second)
		probe.leave(unanswered)
		open, until := breaker("whe_a")
		Expect(open).To(BeTrue(), "an unanswered probe opens the breaker again")
		Expect(until).To(Equal(at.Add(30 * time.Second)))
		Expect(verdict("whe_a")).To(Equal(breakerOn))

		later(30 * time.Second)
		probe = through("whe_a")
		Expect(probe.probe).To(BeTrue())
		probe.leave(answered)
		Expect(breaker("whe_a")).To(BeFalse(), "an answered probe closes it")
		Expect(through("whe_a").probe).To(BeFalse())
	})

	It("checks the breaker again for an attempt that waited for a slot", func() {
		held := []*pass{through("whe_a"), through("whe_a"), through("whe_a")}
		done := make(chan int, 1)
		go func() { _, v, _ := g.enter(ctx, "whe_a"); done <- v }()
		Consistently(done).WithTimeout(150 * time.Millisecond).ShouldNot(Receive())
		held[0].leave(unanswered)
		held[1].leave(unanswered) // the breaker opens; a slot is free
		Eventually(done).Should(Receive(Equal(breakerOn)))
	})

	It("makes another probe when one is abandoned", func() {
		attempt("whe_a", 15*time.Second, unanswered)
		attempt("whe_a", 15*time.Second, unanswered)
		later(time.Minute)
		probe := through("whe_a")
		Expect(probe.probe).To(BeTrue())
		probe.leave(abandoned)
		Expect(through("whe_a").probe).To(BeTrue(), "the abandoned probe told nothing")
	})

	It("makes no probe of an attempt it sends back to the queue", func() {
		for range 4 {
			attempt("whe_a", 3*time.Second, answered) // slow
		}
		held := []*pass{through("whe_a"), through("whe_a")}
		g.mu.Lock()
		g.endpoints["whe_a"].openUntil = at.Add(-time.Second) // a breaker that has cooled down
		g.mu.Unlock()
		Expect(verdict("whe_a")).To(Equal(sendLater), "slow and at its bound: the would-be probe goes back")
		held[0].leave(abandoned)
		Expect(through("whe_a").probe).To(BeTrue(), "the probe is still to be made")
		held[1].leave(abandoned)
	})

	It("stops waiting for a slot when its context ends, holding nothing", func() {
		for range 3 {
			through("whe_a")
		}
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan int, 1)
		go func() { _, v, _ := g.enter(cctx, "whe_a"); done <- v }()
		Consistently(done).WithTimeout(150 * time.Millisecond).ShouldNot(Receive())
		cancel()
		Eventually(done).Should(Receive(Equal(sendLater)))
		g.mu.Lock()
		defer g.mu.Unlock()
		Expect(g.endpoints["whe_a"].waiting).To(BeZero())
		Expect(g.endpoints["whe_a"].inFlight).To(HaveLen(3))
	})

	It("remembers an endpoint for ten minutes after its last attempt, and one with an open breaker for longer", func() {
		attempt("whe_a", 20*time.Millisecond, answered)
		attempt("whe_b", 20*time.Millisecond, unanswered)
		attempt("whe_b", 20*time.Millisecond, unanswered) // its breaker opens
		held := through("whe_c")
		advance(9 * time.Minute)
		g.mu.Lock()
		g.sweep(clock)
		Expect(g.endpoints).To(SatisfyAll(HaveKey("whe_a"), HaveKey("whe_b"), HaveKey("whe_c")))
		advance(time.Minute)
		g.sweep(clock)
		Expect(g.endpoints).To(SatisfyAll(Not(HaveKey("whe_a")), HaveKey("whe_b"), HaveKey("whe_c")), "in flight: whe_c")
		g.mu.Unlock()
		held.leave(answered)
	})
})
