package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// LoadResult is what `bench load` prints: one JSON object, the figures of kload's load mode for a
// JSON API over HTTPS.
type LoadResult struct {
	Concurrency int     `json:"concurrency"`
	DurationS   float64 `json:"duration_s"`
	Requests    int64   `json:"requests"`
	Accepted    int64   `json:"accepted"`
	NonAccepted int64   `json:"non_accepted"`
	Errors      int64   `json:"errors"`
	AcceptedPS  float64 `json:"accepted_per_s"`
	P50ms       float64 `json:"p50_ms"`
	P90ms       float64 `json:"p90_ms"`
	P99ms       float64 `json:"p99_ms"`
	P999ms      float64 `json:"p999_ms"`
	MaxMs       float64 `json:"max_ms"`
	// CPUSeconds is the load process's own user+system time (getrusage).
	CPUSeconds   float64 `json:"cpu_s"`
	FirstOther   string  `json:"first_non_accepted,omitempty"`
	FirstError   string  `json:"first_error,omitempty"`
	StartUnix    float64 `json:"start_unix"`
	EndUnix      float64 `json:"end_unix"`
	AcceptStatus int     `json:"accept_status"`
}

// runLoad is `bench load`: the e2e scenario's load process, a separate process so that the
// server's CPU is its own. It does what the Kannel peer's kload does for sendsms (closed loop, c
// workers each on one keep-alive connection, every latency kept for exact percentiles, a distinct
// message each time) for POST /accounts/{account_id}/messages: JSON over HTTPS with a bearer key.
// 201 counts as accepted.
func runLoad(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("url", "", "the API's https://host:port (loopback only)")
	ca := fs.String("ca", "", "PEM file of the server's certificate")
	key := fs.String("key", "", "API key secret (or $BENCH_LOAD_KEY)")
	account := fs.String("account", "", "account id")
	from := fs.String("from", "", "sender number")
	recipients := fs.Int("recipients", 0, "distinct recipients in rotation; 0: a new recipient for every message, as kload does")
	conc := fs.Int("c", 64, "concurrent keep-alive connections (closed loop)")
	dur := fs.Duration("d", 20*time.Second, "run time")
	timeout := fs.Duration("timeout", 30*time.Second, "timeout of one request")
	latOut := fs.String("lat-out", "", "write every request's start (ms after the load's start) and latency (ms) to this CSV file")
	cpuProfile := fs.String("cpu-profile", "", "write the load process's CPU profile to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if *key == "" {
		*key = os.Getenv("BENCH_LOAD_KEY")
	}
	u, err := url.Parse(*base)
	if err != nil || u.Scheme != "https" {
		return fmt.Errorf("load: -url must be https://host:port, got %q", *base)
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("load: refusing non-loopback target %s", u.Hostname())
	}
	if *account == "" || *from == "" || *key == "" || *ca == "" {
		return errors.New("load: -account, -from, -key and -ca are required")
	}
	pem, err := os.ReadFile(*ca)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return errors.New("load: no certificate in " + *ca)
	}
	client := &http.Client{
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
			MaxIdleConns:        *conc * 2,
			MaxIdleConnsPerHost: *conc * 2,
			MaxConnsPerHost:     *conc,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
		Timeout: *timeout,
	}
	target := *base + "/accounts/" + *account + "/messages"
	auth := "Bearer " + *key

	var issued, accepted, other, errs atomic.Int64
	var firstOther, firstErr atomic.Value
	lats := make([][]time.Duration, *conc)
	starts := make([][]time.Duration, *conc)
	start := time.Now()
	deadline := start.Add(*dur)
	var wg sync.WaitGroup
	for w := range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 1<<15)
			var began []time.Duration
			var body bytes.Buffer
			for time.Now().Before(deadline) {
				i := issued.Add(1)
				n := i
				if *recipients > 0 {
					n = i % int64(*recipients)
				}
				body.Reset()
				// +1555 and a 7-digit counter (more digits past 10^7, still E.164).
				body.WriteString(`{"to":"+1555`)
				body.WriteString(fmt.Sprintf("%07d", n))
				body.WriteString(`","from":"`)
				body.WriteString(*from)
				body.WriteString(`","body":"Load test message `)
				body.WriteString(strconv.FormatInt(i, 10))
				body.WriteString(`"}`)
				req, _ := http.NewRequest(http.MethodPost, target, bytes.NewReader(body.Bytes()))
				req.Header.Set("Authorization", auth)
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					time.Sleep(10 * time.Millisecond)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				local = append(local, time.Since(t0))
				if *latOut != "" {
					began = append(began, t0.Sub(start))
				}
				if resp.StatusCode == http.StatusCreated {
					accepted.Add(1)
				} else {
					other.Add(1)
					firstOther.CompareAndSwap(nil, fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(b)))
				}
			}
			lats[w], starts[w] = local, began
		}()
	}
	wg.Wait()
	end := time.Now()
	elapsed := end.Sub(start).Seconds()
	if *latOut != "" {
		if err := writeLatencies(*latOut, start, starts, lats); err != nil {
			return err
		}
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	msOf := func(q float64) float64 { return float64(quantile(all, q).Microseconds()) / 1000 }
	r := LoadResult{Concurrency: *conc, DurationS: elapsed, Requests: int64(len(all)), Accepted: accepted.Load(),
		NonAccepted: other.Load(), Errors: errs.Load(), AcceptedPS: float64(accepted.Load()) / elapsed,
		P50ms: msOf(0.50), P90ms: msOf(0.90), P99ms: msOf(0.99), P999ms: msOf(0.999), MaxMs: msOf(1),
		CPUSeconds: selfCPUSeconds(),
		StartUnix:  float64(start.UnixNano()) / 1e9, EndUnix: float64(end.UnixNano()) / 1e9, AcceptStatus: http.StatusCreated}
	if v := firstOther.Load(); v != nil {
		r.FirstOther = v.(string)
	}
	if v := firstErr.Load(); v != nil {
		r.FirstError = v.(string)
	}
	return json.NewEncoder(stdout).Encode(r)
}

// writeLatencies writes each request's start after the load's start and its latency, in ms, one
// request a line, in the order of their starts, after a comment line with the load's start.
func writeLatencies(path string, start time.Time, starts, lats [][]time.Duration) error {
	type req struct{ start, lat time.Duration }
	var all []req
	for w := range lats {
		for i := range starts[w] {
			all = append(all, req{starts[w][i], lats[w][i]})
		}
	}
	slices.SortFunc(all, func(a, b req) int { return int(a.start - b.start) })
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# load start unix %.3f\nstart_ms,latency_ms\n", float64(start.UnixNano())/1e9)
	for _, r := range all {
		fmt.Fprintf(&buf, "%.3f,%.3f\n", float64(r.start.Microseconds())/1000, float64(r.lat.Microseconds())/1000)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
