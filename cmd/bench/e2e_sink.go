package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// SinkCount is what `bench sink` answers on GET /count.
type SinkCount struct {
	// Requests is every POST received; Valid those whose signature verified; Unique the distinct
	// webhook-ids among the valid ones (deliveries are at least once); Invalid the rest.
	Requests int64 `json:"requests"`
	Valid    int64 `json:"valid"`
	Unique   int64 `json:"unique"`
	Invalid  int64 `json:"invalid"`
	// Types counts the valid deliveries by event type.
	Types map[string]int64 `json:"types"`
	// First and Last are the arrival times (Unix seconds) of the first and the last new
	// webhook-id.
	First float64 `json:"first"`
	Last  float64 `json:"last"`
	// CPUSeconds is the sink's own user+system time so far.
	CPUSeconds float64 `json:"cpu_s"`
	// FirstInvalid describes the first delivery that did not verify.
	FirstInvalid string `json:"first_invalid,omitempty"`
}

// runSink is `bench sink`: the e2e scenario's webhook receiver, a separate process like the Kannel
// peer's DLR sink. It verifies every delivery's Standard Webhooks signature with the endpoint's
// secret (the library's own Verify, not the server's signing code), answers 204 to a valid one
// and 400 to any other, and counts them; GET /count answers a SinkCount. It writes its address to
// -addr-file once it listens.
func runSink(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("sink", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	addrFile := fs.String("addr-file", "", "write the bound address here")
	secret := fs.String("secret", "", "the endpoint's signing secret, whsec_… (or $BENCH_SINK_SECRET)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *secret == "" {
		*secret = os.Getenv("BENCH_SINK_SECRET")
	}
	host, _, _ := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return errors.New("sink: must listen on loopback")
	}
	var verifier *standardwebhooks.Webhook
	if *secret != "" {
		v, err := standardwebhooks.NewWebhook(*secret)
		if err != nil {
			return fmt.Errorf("sink: secret: %w", err)
		}
		verifier = v
	}
	var (
		mu    sync.Mutex
		count = SinkCount{Types: map[string]int64{}}
		seen  = map[string]struct{}{}
	)
	mux := http.NewServeMux()
	// The bench's -server-pprof takes the sink's CPU profile too, as the server's.
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /count", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		c := count
		c.Types = make(map[string]int64, len(count.Types))
		for k, v := range count.Types {
			c.Types[k] = v
		}
		mu.Unlock()
		c.CPUSeconds = selfCPUSeconds()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(c)
	})
	// DELETE /count starts counting afresh (ids seen before stay seen).
	mux.HandleFunc("DELETE /count", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		count = SinkCount{Types: map[string]int64{}}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var typ struct {
			Type string `json:"type"`
		}
		if err == nil && verifier != nil {
			err = verifier.Verify(body, r.Header)
		}
		if err == nil {
			err = json.Unmarshal(body, &typ)
		}
		now := time.Now()
		id := r.Header.Get("webhook-id")
		mu.Lock()
		count.Requests++
		if err != nil {
			count.Invalid++
			if count.FirstInvalid == "" {
				count.FirstInvalid = strings.TrimSpace(err.Error())
			}
			mu.Unlock()
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		count.Valid++
		count.Types[typ.Type]++
		if _, ok := seen[id]; !ok {
			seen[id] = struct{}{}
			count.Unique++
			t := float64(now.UnixNano()) / 1e9
			if count.First == 0 {
				count.First = t
			}
			count.Last = t
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(ln.Addr().String()), 0o600); err != nil {
			return err
		}
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	return srv.Serve(ln)
}
