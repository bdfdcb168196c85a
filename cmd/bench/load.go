package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"
)

// Phase is one measured workload: Op run in a loop by Concurrency workers.
type Phase struct {
	// DB is the database the phase runs on, or "-" when none (the baseline).
	DB string
	// Key is the short name -phase selects by ("get", "post", "baseline").
	Key string
	// Name is what the table prints, e.g. "GET /accounts/{id}".
	Name string
	// Op performs one request. It returns nil on success (a 2xx), a *StatusError for any other
	// answer, or the transport error. worker is 0..Concurrency-1.
	Op func(ctx context.Context, worker int) error
}

// Result is a phase's figures.
type Result struct {
	Scenario    string
	DB          string
	Phase       string
	Name        string
	Concurrency int
	Duration    time.Duration
	// Requests counts successful (2xx) requests completed inside the measured window.
	Requests int64
	RPS      float64
	P50      time.Duration
	P90      time.Duration
	P99      time.Duration
	Max      time.Duration
	// Errors counts non-2xx answers and transport errors inside the window.
	Errors int64
	// ErrorSamples are the first few distinct errors ("422 {...}", "dial tcp: ...").
	ErrorSamples []string
	// Profile is the CPU profile written for the phase, if any.
	Profile string
	// CPU says who used the machine's CPU during the window; nil when unknown.
	CPU *CPUShare
}

// StatusError is a non-2xx answer.
type StatusError struct {
	Status int
	Body   string
}

func (e *StatusError) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Body) }

const maxErrorSamples = 5

// worker is one client's tally. Each worker owns its slice, so recording takes no lock.
type worker struct {
	latencies []time.Duration
	errors    int64
	samples   []string
}

// Measure runs a phase: the workers loop on p.Op for the warm-up and then the measured duration,
// continuously (no reconnect between the two). A request counts when it completes inside the
// measured window [start+warmup, start+warmup+duration]. At the window's end workers stop issuing
// requests; the at most one request each still has in flight finishes (bounded by -timeout) but
// counts nowhere. It is not aborted: an abort closes the connection, and the server would log
// the canceled request. Latencies are per-request wall times kept in full and sorted at the end.
func (b *Bench) Measure(ctx context.Context, p Phase) (*Result, error) {
	conc, warmup, dur := b.opts.Concurrency, b.opts.Warmup, b.duration
	b.rep.Progress("scenario %s: db=%s %s: warm-up %s, then %s at concurrency %d", b.scenario, p.DB, p.Name, warmup, dur, conc)

	start := time.Now()
	from, to := start.Add(warmup), start.Add(warmup+dur)
	pctx, cancel := context.WithDeadline(ctx, to)
	defer cancel()

	var profile string
	if b.opts.CPUProfile != "" {
		profile = fmt.Sprintf("%s-%s-%s.pprof", b.opts.CPUProfile, p.DB, p.Key)
		stop, err := profileWindow(pctx, profile, time.Until(from))
		if err != nil {
			return nil, err
		}
		defer func() { cancel(); stop() }()
	}

	// Sample the machine's CPU at the window's edges, to show who used it while we measured.
	cpuDone := cpuWindow(from, to)

	workers := make([]worker, conc)
	perWorker := 1 << 14
	var wg sync.WaitGroup
	for i := range workers {
		w := &workers[i]
		w.latencies = make([]time.Duration, 0, perWorker)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pctx.Err() == nil {
				rctx, rcancel := context.WithTimeout(ctx, b.opts.Timeout)
				t0 := time.Now()
				err := p.Op(rctx, i)
				t1 := time.Now()
				rcancel()
				if t1.Before(from) || t1.After(to) || ctx.Err() != nil {
					continue // warm-up, past the window, or interrupted
				}
				if err == nil {
					w.latencies = append(w.latencies, t1.Sub(t0))
					continue
				}
				w.errors++
				if len(w.samples) < maxErrorSamples {
					w.samples = append(w.samples, sampleOf(err))
				}
				if !isStatus(err) {
					// A transport error is usually immediate (refused, reset); don't spin on it.
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	r := &Result{Scenario: b.scenario, DB: p.DB, Phase: p.Key, Name: p.Name, Concurrency: conc, Duration: dur,
		Profile: profile, CPU: <-cpuDone}
	var all []time.Duration
	for i := range workers {
		w := &workers[i]
		all = append(all, w.latencies...)
		r.Errors += w.errors
		for _, s := range w.samples {
			if len(r.ErrorSamples) < maxErrorSamples && !slices.Contains(r.ErrorSamples, s) {
				r.ErrorSamples = append(r.ErrorSamples, s)
			}
		}
	}
	slices.Sort(all)
	r.Requests = int64(len(all))
	r.RPS = float64(r.Requests) / dur.Seconds()
	r.P50, r.P90, r.P99 = quantile(all, 0.50), quantile(all, 0.90), quantile(all, 0.99)
	if len(all) > 0 {
		r.Max = all[len(all)-1]
	}
	b.rep.Result(r)
	return r, nil
}

// quantile returns the q-quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func isStatus(err error) bool {
	var se *StatusError
	return errors.As(err, &se)
}

// sampleOf shortens an error to one line for the report.
func sampleOf(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// profileWindow starts a CPU profile after delay (the warm-up) and stops it when ctx ends; the
// returned stop waits for the file to be written.
func profileWindow(ctx context.Context, path string, delay time.Duration) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer f.Close()
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench: cpu profile:", err)
			return
		}
		<-ctx.Done()
		pprof.StopCPUProfile()
	}()
	return func() { <-done }, nil
}
