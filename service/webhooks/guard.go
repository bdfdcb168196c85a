package webhooks

import (
	"context"
	"sync"
	"time"
)

// Per-endpoint isolation defaults: one tenant's slow or dead endpoint must not hold the delivery
// workers that every other tenant's webhooks need.
const (
	// DefaultEndpointConcurrency is how many attempts one instance sends at once to an
	// endpoint that answers quickly.
	DefaultEndpointConcurrency = 100
	// DefaultSlowEndpointConcurrency is how many attempts one instance sends at once to a
	// slow endpoint: one whose answers take a second or more on average, or which has kept this
	// many attempts waiting half a second.
	DefaultSlowEndpointConcurrency = 25
	// DefaultBreakerThreshold is how many attempts in a row an endpoint may leave
	// unanswered (each waits the whole timeout) before its breaker opens.
	DefaultBreakerThreshold = 5
	// DefaultBreakerCooldown is how long an open breaker fails attempts at once before it
	// lets one through as a probe.
	DefaultBreakerCooldown = 30 * time.Second
)

// webhookSlowAttempt is how long an endpoint's attempts may take on average before it counts as
// slow. It also counts as slow, stalled, when slowLimit of its attempts have been in flight for
// webhookStalledAttempt with no answer from it meanwhile: a stall shows there long before any
// attempt times out, while a busy endpoint that answers slowly still answers.
const (
	webhookSlowAttempt    = time.Second
	webhookStalledAttempt = 500 * time.Millisecond
)

// endpointGuard is one instance's view of how its attempts fare at each endpoint. It bounds the
// attempts in flight to an endpoint, tighter for a slow one, and stops sending for a while to an
// endpoint that leaves its attempts unanswered (a breaker). An endpoint that answers quickly may
// use as many workers as it needs up to the wider bound (more attempts wait a moment for a
// slot); a slow endpoint's attempts beyond the tighter bound go back to the queue instead of
// holding workers. All of it is per instance and in memory: instances each apply their own
// bounds, and a restart forgets them.
type endpointGuard struct {
	limit, slowLimit int
	threshold        int
	cooldown         time.Duration
	// clock times attempts (real time, whatever clock schedules the retries); at is the retry
	// clock, on which breakers cool down.
	clock, at func() time.Time

	mu        sync.Mutex
	nextID    uint64
	endpoints map[string]*endpointState
	leaves    int // attempts ended since the last sweep
}

// webhookGuardMemory is how long the guard remembers an endpoint nothing is sent to; the guard
// sweeps such endpoints out every webhookGuardSweep attempts.
const (
	webhookGuardMemory = 10 * time.Minute
	webhookGuardSweep  = 4096
)

// endpointState is what the guard knows of one endpoint. It is dropped once the endpoint has had
// nothing in flight for webhookGuardMemory and its breaker is closed.
type endpointState struct {
	lastUsed   time.Time            // when an attempt last left (real time)
	lastAnswer time.Time            // when an attempt last got an answer (real time)
	inFlight   map[uint64]time.Time // when each attempt in flight began (real time)
	// waiting counts the attempts in enter's wait (sweep keeps their state); waiters are their
	// channels in the order they came, the first of which an attempt's leave signals.
	waiting int
	waiters []chan struct{}
	// latency is a moving average of the endpoint's attempt durations (answered or not).
	latency time.Duration
	// The breaker: unanswered attempts in a row; open until openUntil, then one probe at a time.
	unanswered int
	openUntil  time.Time
	probing    bool
}

func newEndpointGuard(limit, slowLimit, threshold int, cooldown time.Duration, at func() time.Time) *endpointGuard {
	return &endpointGuard{limit: limit, slowLimit: slowLimit, threshold: threshold, cooldown: cooldown,
		clock: time.Now, at: at, endpoints: map[string]*endpointState{}}
}

func (g *endpointGuard) state(endpoint string) *endpointState {
	s := g.endpoints[endpoint]
	if s == nil {
		s = &endpointState{inFlight: map[uint64]time.Time{}}
		g.endpoints[endpoint] = s
	}
	return s
}

// sweep drops the endpoints that have had nothing in flight or waiting for webhookGuardMemory
// and whose breaker is closed. Called with g.mu held.
func (g *endpointGuard) sweep(now time.Time) {
	for id, s := range g.endpoints {
		if len(s.inFlight) == 0 && s.waiting == 0 && s.openUntil.IsZero() && !s.probing &&
			now.Sub(s.lastUsed) >= webhookGuardMemory {
			delete(g.endpoints, id)
		}
	}
}

// slow reports whether the endpoint is slow at real time now: on average, or because it stalls
// (see webhookStalledAttempt).
func (g *endpointGuard) slow(s *endpointState, now time.Time) bool {
	if s.latency >= webhookSlowAttempt {
		return true
	}
	if len(s.inFlight) < g.slowLimit || now.Sub(s.lastAnswer) < webhookStalledAttempt {
		return false
	}
	n := 0
	for _, began := range s.inFlight {
		if now.Sub(began) >= webhookStalledAttempt {
			if n++; n >= g.slowLimit {
				return true
			}
		}
	}
	return false
}

// pass is an attempt let through to an endpoint; its leave reports how the attempt ended.
type pass struct {
	g     *endpointGuard
	s     *endpointState // kept while the attempt is in flight: sweep drops no such state
	id    uint64
	probe bool // the attempt is the probe of an open breaker
}

// Verdicts of enter on an attempt.
const (
	sendNow   = iota // send it: the pass holds a slot
	sendLater        // the endpoint is slow and at its bound: back to the queue, not an attempt
	breakerOn        // the endpoint's breaker is open: the attempt fails without a request
)

// Outcomes of an attempt, as the guard sees them.
const (
	answered   = iota // any HTTP answer, or a failure that cost no waiting (refused, DNS, TLS…)
	unanswered        // no answer within the timeout
	abandoned         // cut short by this instance (it is stopping): it tells nothing of the endpoint
)

// enter decides on an attempt to endpoint. While the endpoint's breaker is open it answers
// breakerOn with the time it stays open; once the cool-down has passed, one attempt at a time is
// let through as the probe. Otherwise the attempt is let through (sendNow) once fewer attempts
// are in flight there than the endpoint's bound; while they are not, it waits for a slot as long
// as the endpoint is not slow, and is sent back (sendLater) when it is. When ctx ends while it
// waits, it answers sendLater (the caller sees ctx's error). Only a sendNow verdict comes with a
// pass, whose leave must be called.
//
// The attempts that wait for a slot at an endpoint queue: each leave wakes the first of them (it
// woke all of them once, and all but one waited again, each with a new timer: a claim of 200
// deliveries to one endpoint at its bound of 100 made thousands of wake-ups). A waiter woken that
// does not take the slot (its context ended, the endpoint turned slow, its breaker opened) wakes
// the next, so that each looks again as it did when all were woken; each also looks again after
// 100 ms without a wake-up.
func (g *endpointGuard) enter(ctx context.Context, endpoint string) (p *pass, verdict int, openUntil time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.state(endpoint)
	var wake chan struct{}
	var t *time.Timer
	signalled := false
	defer func() {
		if t != nil {
			t.Stop()
		}
		if signalled && p == nil {
			s.wakeFirst() // the slot this waiter was woken for is the next one's
		}
	}()
	for {
		probe := false
		if !s.openUntil.IsZero() {
			if s.probing || g.at().Before(s.openUntil) {
				return nil, breakerOn, s.openUntil
			}
			probe = true
		}
		now := g.clock()
		slow := g.slow(s, now)
		bound := g.limit
		if slow {
			bound = g.slowLimit
		}
		if len(s.inFlight) < bound {
			g.nextID++
			s.inFlight[g.nextID] = now
			s.probing = s.probing || probe
			return &pass{g: g, s: s, id: g.nextID, probe: probe}, sendNow, time.Time{}
		}
		if slow {
			return nil, sendLater, time.Time{}
		}
		// A quick endpoint at its bound: wait a moment for one of its attempts to leave, and
		// look again (it may have turned slow, or its breaker opened, meanwhile). A waiter woken
		// whose slot another attempt took first waits at the head of the queue again.
		if wake == nil {
			wake, t = make(chan struct{}, 1), time.NewTimer(100*time.Millisecond)
		} else {
			t.Reset(100 * time.Millisecond)
		}
		if signalled {
			s.waiters = append(s.waiters, nil)
			copy(s.waiters[1:], s.waiters)
			s.waiters[0] = wake
		} else {
			s.waiters = append(s.waiters, wake)
		}
		s.waiting++
		g.mu.Unlock()
		select {
		case <-wake:
		case <-t.C:
		case <-ctx.Done():
		}
		g.mu.Lock()
		s.waiting--
		// Out of the queue: a leave took it out when it signalled; otherwise take it out here.
		signalled = !s.dropWaiter(wake)
		if signalled {
			select {
			case <-wake: // the signal, when the timer or ctx was chosen over it
			default:
			}
		}
		if ctx.Err() != nil {
			return nil, sendLater, time.Time{}
		}
	}
}

// wakeFirst wakes the first attempt waiting for a slot, if any. Called with g.mu held.
func (s *endpointState) wakeFirst() {
	if len(s.waiters) == 0 {
		return
	}
	w := s.waiters[0]
	s.waiters[0] = nil
	s.waiters = s.waiters[1:]
	if len(s.waiters) == 0 {
		s.waiters = nil // lets the array go rather than crawl along it
	}
	w <- struct{}{} // never blocks: a waiter's channel holds one, and is in the queue once
}

// dropWaiter takes wake out of the queue and reports whether it was there (when it was not, a
// leave took it out to wake it). Called with g.mu held.
func (s *endpointState) dropWaiter(wake chan struct{}) bool {
	for i, w := range s.waiters {
		if w == wake {
			copy(s.waiters[i:], s.waiters[i+1:])
			s.waiters[len(s.waiters)-1] = nil
			s.waiters = s.waiters[:len(s.waiters)-1]
			return true
		}
	}
	return false
}

// leave ends the attempt: it frees its slot and, unless abandoned, feeds its duration and whether
// it got an answer to the endpoint's average and breaker.
func (p *pass) leave(outcome int) {
	g, s := p.g, p.s
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock()
	took := now.Sub(s.inFlight[p.id])
	delete(s.inFlight, p.id)
	s.lastUsed = now
	s.wakeFirst()
	if p.probe {
		s.probing = false
	}
	switch outcome {
	case answered:
		s.unanswered, s.openUntil, s.lastAnswer = 0, time.Time{}, now
	case unanswered:
		s.unanswered++
		if p.probe || (s.openUntil.IsZero() && s.unanswered >= g.threshold) {
			s.openUntil = g.at().Add(g.cooldown)
		}
	}
	if outcome != abandoned {
		// One attempt's duration counts for at most twice webhookSlowAttempt, and the average
		// starts from nothing, so that neither a lone timeout nor a slow first answer makes an
		// endpoint slow; four such attempts in a row do.
		took = min(took, 2*webhookSlowAttempt)
		s.latency = (4*s.latency + took) / 5
	}
	if g.leaves++; g.leaves >= webhookGuardSweep {
		g.leaves = 0
		g.sweep(now)
	}
}
