package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Reporter prints a run: an aligned table (or JSON lines with -json) on stdout, progress on stderr.
// It keeps every line so that Summary can repeat them in one block at the end.
type Reporter struct {
	out, progress io.Writer
	json          bool

	notes   []string
	results []*Result
	skipped []string
	ratios  []string
	targets []string
}

func newReporter(out, progress io.Writer, asJSON bool) *Reporter {
	return &Reporter{out: out, progress: progress, json: asJSON}
}

// Progress tells the person waiting what is happening; it goes to stderr only.
func (r *Reporter) Progress(format string, args ...any) {
	fmt.Fprintf(r.progress, "… "+format+"\n", args...)
}

// Note prints a remark that qualifies the figures (shared CPU, rate limit off, ...).
func (r *Reporter) Note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.notes = append(r.notes, s)
	if r.json {
		r.emit(map[string]any{"type": "note", "text": s})
		return
	}
	fmt.Fprintf(r.out, "# %s\n", s)
}

// Skipped reports a database that could not be used.
func (r *Reporter) Skipped(scenario, db string, err error) {
	s := fmt.Sprintf("scenario %s: skipped %s: %s", scenario, db, sampleOf(err))
	r.skipped = append(r.skipped, s)
	if r.json {
		r.emit(map[string]any{"type": "skipped", "scenario": scenario, "db": db, "error": err.Error()})
		return
	}
	fmt.Fprintln(r.out, s)
}

// Result prints one phase's figures.
func (r *Reporter) Result(res *Result) {
	r.results = append(r.results, res)
	if r.json {
		r.emit(map[string]any{
			"type": "result", "scenario": res.Scenario, "db": res.DB, "phase": res.Phase, "name": res.Name,
			"concurrency": res.Concurrency, "duration_s": res.Duration.Seconds(),
			"requests": res.Requests, "req_per_s": round(res.RPS, 1),
			"p50_ms": ms(res.P50), "p90_ms": ms(res.P90), "p99_ms": ms(res.P99), "max_ms": ms(res.Max),
			"errors": res.Errors, "error_samples": res.ErrorSamples, "cpu_profile": res.Profile, "cpu_percent": res.CPU,
		})
		return
	}
	fmt.Fprintln(r.out, resultLine(res))
	if c := res.CPU; c != nil {
		fmt.Fprintln(r.out, cpuLine(c))
	}
	for _, s := range res.ErrorSamples {
		fmt.Fprintf(r.out, "    error: %s\n", s)
	}
	if res.Profile != "" {
		fmt.Fprintf(r.out, "    cpu profile: %s (go tool pprof -top %s)\n", res.Profile, res.Profile)
	}
}

func resultLine(res *Result) string {
	return fmt.Sprintf("scenario %-4s db=%-8s  %-38s %8d req  %7.0f req/s  p50 %7s  p90 %7s  p99 %7s  max %7s  errors %d",
		res.Scenario, res.DB, res.Name, res.Requests, res.RPS, fmtDur(res.P50), fmtDur(res.P90), fmtDur(res.P99), fmtDur(res.Max), res.Errors)
}

func cpuLine(c *CPUShare) string {
	s := fmt.Sprintf("    cpu in the window (%% of one core): bench process %.0f%%, postgres %.0f%%, other processes %.0f%%, idle %.0f%%",
		c.Bench, c.Postgres, c.Other, c.Idle)
	if c.Other >= 20 {
		s += "  <- other processes competed for the CPU: figures are understated"
	}
	return s
}

// Ratio prints a phase's throughput as a share of a baseline's, both from this run.
func (r *Reporter) Ratio(res, base *Result) {
	if res == nil || base == nil || base.RPS == 0 {
		return
	}
	pct := 100 * res.RPS / base.RPS
	s := fmt.Sprintf("scenario %-4s db=%-8s  ratio: %s vs %s: %.1f%% of baseline throughput (%.0f vs %.0f req/s)",
		res.Scenario, res.DB, res.Name, base.Name, pct, res.RPS, base.RPS)
	r.ratios = append(r.ratios, s)
	if r.json {
		r.emit(map[string]any{"type": "ratio", "scenario": res.Scenario, "db": res.DB, "phase": res.Phase,
			"baseline": base.Phase, "percent": round(pct, 1)})
		return
	}
	fmt.Fprintln(r.out, s)
}

// Target prints a figure next to the target for it.
func (r *Reporter) Target(res *Result, what string, min float64) {
	if res == nil {
		return
	}
	verdict := "met"
	if res.RPS < min {
		verdict = "NOT met"
	}
	s := fmt.Sprintf("scenario %-4s db=%-8s  target: %s ≥ %.0f req/s — measured %.0f req/s: %s",
		res.Scenario, res.DB, what, min, res.RPS, verdict)
	r.targets = append(r.targets, s)
	if r.json {
		r.emit(map[string]any{"type": "target", "scenario": res.Scenario, "db": res.DB, "phase": res.Phase,
			"what": what, "min_req_per_s": min, "req_per_s": round(res.RPS, 1), "met": res.RPS >= min})
		return
	}
	fmt.Fprintln(r.out, s)
}

// Summary repeats the whole run in one block (text mode only; JSON readers have every line).
func (r *Reporter) Summary() {
	if r.json {
		return
	}
	fmt.Fprintf(r.out, "\n%s summary %s\n", strings.Repeat("=", 20), strings.Repeat("=", 20))
	for _, n := range r.notes {
		fmt.Fprintf(r.out, "# %s\n", n)
	}
	for _, res := range r.results {
		fmt.Fprintln(r.out, resultLine(res))
		if c := res.CPU; c != nil {
			fmt.Fprintln(r.out, cpuLine(c))
		}
	}
	for _, groups := range [][]string{r.ratios, r.targets, r.skipped} {
		for _, s := range groups {
			fmt.Fprintln(r.out, s)
		}
	}
}

func (r *Reporter) emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(r.out, "%s\n", b)
}

func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }

func round(f float64, places int) float64 {
	p := 1.0
	for range places {
		p *= 10
	}
	return float64(int64(f*p+0.5)) / p
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
}
