package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// Issue 5's targets with PostgreSQL.
const (
	webhookTarget      = 2000 // deliveries per second to a local receiver
	webhookP99Target   = time.Second
	webhookOfferedRate = 2500 // events per second the producers offer
	webhookProducers   = 16   // producers of the single phase, each one event per transaction
	// webhookGroupProducers is the grouped phase's producers: as many as the outbound path's
	// concurrent callers of a group commit can be, each waiting for its event's commit.
	webhookGroupProducers = 64
	// webhookBacklog is how many events the backlog phase records before the workers start.
	webhookBacklog = 20000
	// webhookGroupMax and webhookGroupParallel are the group commit of the grouped phase: those
	// of the outbound path's sent and receipt records (service's outboundBatch and
	// outboundParallel), which record the platform's busiest events.
	webhookGroupMax      = 200
	webhookGroupParallel = 1
	// webhookStalledBurst is how many events the stalled phase records at once for an endpoint
	// that never answers, before its producers start.
	webhookStalledBurst = 2000
)

// runWebhooks is the "webhooks" scenario (issue 5). Every phase has a project of its own with
// one endpoint subscribed to everything: a local plain-HTTP receiver that answers 204 at once.
// The job workers of the same process deliver the events, signed.
//
//   - backlog: events recorded before the workers start, then delivered as fast as they can be:
//     the delivery side's capacity, apart from any producer.
//   - grouped: producers offer events at a fixed rate, one event per call that returns once the
//     event is committed, through a group commit (store.Batcher) as the platform's busiest event
//     sources, the sent and receipt records of the outbound path, commit theirs. The targets are
//     judged on this phase.
//   - single: the same offered rate, each event in a transaction of its own: the most expensive
//     way to record an event, which bounds the rate by the producers' own cost.
//   - stalled: the grouped phase again, after another project recorded a burst of events for an
//     endpoint that accepts connections and never answers (each attempt waits the whole 15 s
//     timeout): what one tenant's dead endpoint does to everybody else's webhooks.
//
// The steady phases report deliveries/s while the producers run, the lag from an event's
// creation to its arrival at the receiver, and how the CPU was shared.
func runWebhooks(ctx context.Context, b *Bench) error {
	b.rep.Note("webhooks: a backlog of %d events delivered as fast as the workers can; then %d events/s offered by %d producers through a group commit (at most %d per transaction, as the outbound path records its events), then by %d producers one event per transaction, then group-committed again beside a burst of %d events for another project's endpoint that never answers; each phase has its own endpoint, a receiver on loopback plain HTTP answering 204",
		webhookBacklog, webhookOfferedRate, webhookGroupProducers, webhookGroupMax, webhookProducers, webhookStalledBurst)
	return b.EachDatabase(ctx, func(ctx context.Context, db *Database) error {
		st := db.Store
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		core, err := service.NewCore(service.CoreConfig{
			Store: st, PublicURL: "https://127.0.0.1", Logger: log, WebhookAllowPrivate: true,
			Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
				c, err := sim.New(sim.Config{Store: st.Sim(), Reporter: r, Latency: -1, Logger: log})
				return []carriers.Carrier{c}, err
			},
		})
		if err != nil {
			return err
		}
		var bl *backlog
		if b.keep("backlog") {
			if bl, err = startBacklog(ctx, st, core); err != nil {
				return err
			}
			defer bl.rcv.close()
		}
		workers, err := core.StartWorkers(ctx)
		if err != nil {
			return err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = workers.Stop(sctx)
		}()
		if bl != nil {
			drained := bl.drain(ctx)
			drain := &Result{Scenario: b.scenario, DB: db.Name, Phase: "backlog", Name: "webhook deliveries of a backlog",
				Requests: drained.delivered, RPS: float64(drained.delivered) / drained.took.Seconds(), Duration: drained.took}
			b.rep.Note("webhooks db=%s: a backlog of %d events (recorded before the workers started, %d per transaction) delivered in %.1fs: %.0f deliveries/s, the delivery side's capacity apart from the producers'",
				db.Name, webhookBacklog, backlogPerTx, drained.took.Seconds(), drain.RPS)
			if db.Name == "postgres" {
				b.rep.Target(drain, "webhook deliveries of a backlog", webhookTarget)
			}
		}
		if b.keep("grouped") {
			err := steadyPhase(ctx, b, db, core, "grouped", "events group-committed", webhookGroupProducers, nil, groupRecorder(st))
			if err != nil {
				return err
			}
		}
		if b.keep("single") {
			err := steadyPhase(ctx, b, db, core, "single", "one event per transaction", webhookProducers, nil, func(ctx context.Context, e store.Event) error {
				return st.Tx(ctx, func(tx *store.Store) error { return webhooks.Publish(ctx, tx, e) })
			})
			if err != nil {
				return err
			}
		}
		if b.keep("stalled") {
			stalled, err := startStalledReceiver()
			if err != nil {
				return err
			}
			defer stalled.close()
			burst := func(ctx context.Context) error { return recordStalledBurst(ctx, st, core, stalled.url) }
			err = steadyPhase(ctx, b, db, core, "stalled", "events group-committed, beside a stalled endpoint", webhookGroupProducers, burst,
				groupRecorder(st))
			b.rep.Note("webhooks db=%s, stalled: the stalled endpoint got %d requests, at most %d at once (a burst of %d events for it)",
				db.Name, stalled.requests.Load(), stalled.maxInFlight.Load(), webhookStalledBurst)
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// groupRecorder records events as the outbound path records its own: through a group commit of
// at most webhookGroupMax events per transaction, one transaction at a time.
func groupRecorder(st *store.Store) func(ctx context.Context, e store.Event) error {
	group := store.NewBatcher(webhookGroupMax, webhookGroupParallel, func(ctx context.Context, evs []store.Event) ([]struct{}, error) {
		err := st.Tx(ctx, func(tx *store.Store) error { return webhooks.Publish(ctx, tx, evs...) })
		return make([]struct{}, len(evs)), err
	})
	return func(ctx context.Context, e store.Event) error {
		_, err := group.Do(ctx, e)
		return err
	}
}

// steadyPhase has producers offer webhookOfferedRate events/s, for warm-up plus the measured
// duration, to a project and receiver of the phase's own; record records one event and returns
// once it is committed. before, when set, runs once the phase's endpoint exists, before the
// producers start. It waits (at most 2 minutes) until every event has arrived, then reports
// deliveries/s while producing, the lag from event to arrival and the CPU's split; with
// PostgreSQL, the grouped phase's figures are checked against the targets (the stalled phase is
// to be compared with it).
func steadyPhase(ctx context.Context, b *Bench, db *Database, core *service.Core, key, how string, producers int,
	before func(ctx context.Context) error, record func(ctx context.Context, e store.Event) error) error {
	st := db.Store
	rcv, err := startHookReceiver()
	if err != nil {
		return err
	}
	defer rcv.close()
	p, err := st.CreateProject(ctx, "bench webhooks "+key)
	if err != nil {
		return err
	}
	if _, err := core.Webhooks.SetEndpoint(ctx, p.ID, rcv.url, nil); err != nil {
		return err
	}
	if before != nil {
		if err := before(ctx); err != nil {
			return err
		}
	}
	account := store.NewID(store.PrefixAccount)
	start := time.Now()
	measureFrom, end := start.Add(b.opts.Warmup), start.Add(b.opts.Warmup+b.duration)
	var produced, produceErrs atomic.Int64
	if b.opts.CPUProfile != "" {
		pctx, cancel := context.WithDeadline(ctx, end)
		stop, err := profileWindow(pctx, fmt.Sprintf("%s-%s-webhooks-%s.pprof", b.opts.CPUProfile, db.Name, key), b.opts.Warmup)
		if err != nil {
			cancel()
			return err
		}
		defer stop()
		defer cancel()
	}
	cpuDone := cpuWindow(measureFrom, end)
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) * float64(producers) / webhookOfferedRate)
	for i := range producers {
		wg.Go(func() {
			next := start.Add(time.Duration(i) * interval / time.Duration(producers))
			for ctx.Err() == nil {
				if d := time.Until(next); d > 0 {
					time.Sleep(d)
				}
				if !time.Now().Before(end) {
					return
				}
				next = next.Add(interval)
				e, err := store.NewEvent(p.ID, account, webhooks.EventContactOptedIn, map[string]string{"id": store.NewID(store.PrefixContact)})
				if err == nil {
					err = record(ctx, e)
				}
				if err != nil {
					produceErrs.Add(1)
					continue
				}
				produced.Add(1)
			}
		})
	}
	wg.Wait()
	producedAt := time.Now()
	total := produced.Load()
	// Drain: wait until every event has arrived (or give up after 2 minutes).
	deadline := time.Now().Add(2 * time.Minute)
	for rcv.count() < total && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	arrivals := rcv.snapshot()
	events, err := st.EventsSince(ctx, p.ID, start.Add(-time.Minute))
	if err != nil {
		return err
	}
	var lags []time.Duration
	var inWindow int64
	var lastArrival time.Time
	for _, e := range events {
		at, ok := arrivals[e.ID]
		if !ok {
			continue
		}
		lags = append(lags, at.Sub(e.CreatedAt))
		if !at.Before(measureFrom) && at.Before(end) {
			inWindow++
		}
		if at.After(lastArrival) {
			lastArrival = at
		}
	}
	slices.Sort(lags)
	win := &Result{Scenario: b.scenario, DB: db.Name, Phase: key, Name: "webhook deliveries, " + how,
		Requests: inWindow, RPS: float64(inWindow) / b.duration.Seconds(), Duration: b.duration, CPU: <-cpuDone}
	allRPS := float64(len(lags)) / lastArrival.Sub(start).Seconds()
	if len(lags) > 0 {
		win.P50, win.P90, win.P99, win.Max = quantile(lags, 0.50), quantile(lags, 0.90), quantile(lags, 0.99), lags[len(lags)-1]
	}
	b.rep.Note("webhooks db=%s, %s: %d events produced (%.0f/s offered, %.0f/s achieved, %d producer errors), %d delivered, %d requests in all (duplicates %d); last arrival %.1fs after the producers stopped",
		db.Name, how, total, float64(webhookOfferedRate), float64(total)/producedAt.Sub(start).Seconds(), produceErrs.Load(), len(lags),
		rcv.requests.Load(), rcv.requests.Load()-int64(len(arrivals)), max(0, lastArrival.Sub(producedAt).Seconds()))
	b.rep.Note("webhooks db=%s, %s: %.0f deliveries/s while producing, %.0f/s including the drain; lag from event to arrival p50 %s, p90 %s, p99 %s, max %s",
		db.Name, how, win.RPS, allRPS, fmtDur(win.P50), fmtDur(win.P90), fmtDur(win.P99), fmtDur(win.Max))
	b.rep.Result(win)
	if db.Name == "postgres" && key == "grouped" {
		b.rep.Target(win, "webhook deliveries while producing ("+how+")", webhookTarget)
		verdict := "met"
		if win.P99 > webhookP99Target || int64(len(lags)) < total {
			verdict = "NOT met"
		}
		b.rep.Note("webhooks db=postgres, %s: target: p99 lag ≤ %s with every event delivered — measured %s, %d of %d delivered: %s",
			how, webhookP99Target, fmtDur(win.P99), len(lags), total, verdict)
	}
	return nil
}

// backlogPerTx is how many backlog events one transaction records.
const backlogPerTx = 500

// backlog is the scenario's first phase: events of their own project and endpoint (and receiver),
// recorded before the job workers start, so that their delivery measures the delivery side alone.
type backlog struct {
	rcv *hookReceiver
}

func startBacklog(ctx context.Context, st *store.Store, core *service.Core) (*backlog, error) {
	rcv, err := startHookReceiver()
	if err != nil {
		return nil, err
	}
	p, err := st.CreateProject(ctx, "bench webhooks backlog")
	if err == nil {
		_, err = core.Webhooks.SetEndpoint(ctx, p.ID, rcv.url, nil)
	}
	for n := 0; err == nil && n < webhookBacklog; n += backlogPerTx {
		var evs []store.Event
		if evs, err = optInEvents(p.ID, min(backlogPerTx, webhookBacklog-n)); err == nil {
			err = st.Tx(ctx, func(tx *store.Store) error { return webhooks.Publish(ctx, tx, evs...) })
		}
	}
	if err != nil {
		rcv.close()
		return nil, err
	}
	return &backlog{rcv: rcv}, nil
}

type drained struct {
	delivered int64
	took      time.Duration
}

// drain waits (at most 2 minutes) until the backlog has arrived, from when it is called: right
// after the workers start.
func (bl *backlog) drain(ctx context.Context) drained {
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	for bl.rcv.count() < webhookBacklog && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	return drained{delivered: bl.rcv.count(), took: time.Since(start)}
}

// hookReceiver is the scenario's endpoint: it records when each webhook-id first arrived.
type hookReceiver struct {
	url      string
	srv      *http.Server
	mu       sync.Mutex
	first    map[string]time.Time
	requests atomic.Int64
}

func startHookReceiver() (*hookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &hookReceiver{url: "http://" + ln.Addr().String() + "/hooks", first: map[string]time.Time{}}
	r.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		now := time.Now()
		id := req.Header.Get("webhook-id")
		r.requests.Add(1)
		r.mu.Lock()
		if _, ok := r.first[id]; !ok {
			r.first[id] = now
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() {
		if err := r.srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			fmt.Fprintln(os.Stderr, "bench: webhook receiver:", err)
		}
	}()
	return r, nil
}

func (r *hookReceiver) count() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.first))
}

func (r *hookReceiver) snapshot() map[string]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]time.Time, len(r.first))
	for k, v := range r.first {
		out[k] = v
	}
	return out
}

func (r *hookReceiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

// recordStalledBurst gives a project of its own an endpoint at url and records
// webhookStalledBurst events for it in one transaction.
func recordStalledBurst(ctx context.Context, st *store.Store, core *service.Core, url string) error {
	p, err := st.CreateProject(ctx, "bench webhooks stalled endpoint")
	if err != nil {
		return err
	}
	if _, err := core.Webhooks.SetEndpoint(ctx, p.ID, url, nil); err != nil {
		return err
	}
	evs, err := optInEvents(p.ID, webhookStalledBurst)
	if err != nil {
		return err
	}
	return st.Tx(ctx, func(tx *store.Store) error { return webhooks.Publish(ctx, tx, evs...) })
}

// optInEvents makes n contact.opted_in events of a project, to record.
func optInEvents(projectID string, n int) ([]store.Event, error) {
	account := store.NewID(store.PrefixAccount)
	evs := make([]store.Event, n)
	for i := range evs {
		var err error
		if evs[i], err = store.NewEvent(projectID, account, webhooks.EventContactOptedIn, map[string]string{"id": store.NewID(store.PrefixContact)}); err != nil {
			return nil, err
		}
	}
	return evs, nil
}

// stalledReceiver is an endpoint that takes every request and never answers: each attempt lasts
// until the sender gives up.
type stalledReceiver struct {
	url         string
	srv         *http.Server
	requests    atomic.Int64
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
}

func startStalledReceiver() (*stalledReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &stalledReceiver{url: "http://" + ln.Addr().String() + "/hooks"}
	r.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		// Reading the whole body lets the server notice when the sender closes the connection.
		_, _ = io.Copy(io.Discard, req.Body)
		n := r.inFlight.Add(1)
		for m := r.maxInFlight.Load(); n > m && !r.maxInFlight.CompareAndSwap(m, n); m = r.maxInFlight.Load() {
		}
		<-req.Context().Done() // the sender gave up
		r.inFlight.Add(-1)
	})}
	go func() {
		if err := r.srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			fmt.Fprintln(os.Stderr, "bench: stalled receiver:", err)
		}
	}()
	return r, nil
}

func (r *stalledReceiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx) // waits for no stalled request: they end with their senders
	_ = r.srv.Close()
}
