package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
)

// apiReadTarget is issue 2's target for authenticated reads on PostgreSQL on the 2-core machine.
const apiReadTarget = 4000

// runAPI is the "api" scenario (issue 2): the empty-Echo baseline once, then on each database the
// authenticated read GET /accounts/{id} and the write POST /accounts/{account_id}/contacts, each
// with its throughput as a share of the baseline's.
func runAPI(ctx context.Context, b *Bench) error {
	b.rep.Note("api: the API is wired as `switchboard serve` wires it (simulated carrier, job workers running, API request logs written) except that rate limiting is disabled (server.Config.RateLimit = -1) and the logger drops records below warn")
	var base *Result
	if b.keep("baseline") {
		var err error
		if base, err = b.measureBaseline(ctx); err != nil {
			return err
		}
	}
	return b.EachDatabase(ctx, func(ctx context.Context, db *Database) error {
		s, account, err := b.startAPIWithAccount(ctx, db)
		if err != nil {
			return err
		}
		defer s.Close()

		var get, post *Result
		if b.keep("get") {
			url := s.URL + "/accounts/" + account
			get, err = b.Measure(ctx, Phase{DB: db.Name, Key: "get", Name: "GET /accounts/{id}",
				Op: func(ctx context.Context, _ int) error {
					return call(ctx, s.Client, http.MethodGet, url, s.Key, nil, nil)
				}})
			if err != nil {
				return err
			}
		}
		if b.keep("post") {
			url := s.URL + "/accounts/" + account + "/contacts"
			var n atomic.Int64
			post, err = b.Measure(ctx, Phase{DB: db.Name, Key: "post", Name: "POST /accounts/{account_id}/contacts",
				Op: func(ctx context.Context, _ int) error {
					// +1555 and a 7-digit counter (more digits past 10^7, still E.164): unique per request.
					body := fmt.Sprintf(`{"phone_number":"+1555%07d","first_name":"Bench"}`, n.Add(1))
					return call(ctx, s.Client, http.MethodPost, url, s.Key, []byte(body), nil)
				}})
			if err != nil {
				return err
			}
		}
		b.rep.Ratio(get, base)
		b.rep.Ratio(post, base)
		if db.Name == "postgres" {
			b.rep.Target(get, "authenticated GET /accounts/{id}", apiReadTarget)
		}
		if dropped, err := scrapeCounter(ctx, s, "switchboard_api_logs_dropped_total"); err != nil {
			b.rep.Progress("read /metrics: %v", err)
		} else if dropped != "0" {
			b.rep.Note("api db=%s: the API log writer fell behind and dropped %s request logs (switchboard_api_logs_dropped_total)", db.Name, dropped)
		}
		return nil
	})
}

// startAPIWithAccount starts the API as the api scenario does (startAPI with apiConfig's zero
// value) and creates an account through it, whose id it returns.
func (b *Bench) startAPIWithAccount(ctx context.Context, db *Database) (*apiServer, string, error) {
	s, err := b.startAPI(ctx, db, apiConfig{})
	if err != nil {
		return nil, "", err
	}
	var acct struct {
		ID string `json:"id"`
	}
	if err := call(ctx, s.Client, http.MethodPost, s.URL+"/accounts", s.Key, []byte(`{"name":"Bench account"}`), &acct); err != nil {
		s.Close()
		return nil, "", fmt.Errorf("create account: %w", err)
	}
	return s, acct.ID, nil
}

// measureBaseline measures the empty Echo handler with the same client settings.
func (b *Bench) measureBaseline(ctx context.Context) (*Result, error) {
	dir, err := os.MkdirTemp("", "switchboard-bench-baseline-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bs, err := b.startBaseline(dir)
	if err != nil {
		return nil, err
	}
	defer bs.Close()
	// The same Authorization header as the API phases, so requests are the same size; Echo ignores it.
	const key = "sk_live_BASELINEBASELINEBASELINEBASELINEBASELINEBASELINE"
	return b.Measure(ctx, Phase{DB: "-", Key: "baseline", Name: "empty Echo handler (baseline)",
		Op: func(ctx context.Context, _ int) error {
			return call(ctx, bs.Client, http.MethodGet, bs.URL, key, nil, nil)
		}})
}

// scrapeCounter reads one unlabelled counter from the server's metrics (what the metrics
// listener serves; the API's port does not).
func scrapeCounter(ctx context.Context, s *apiServer, name string) (string, error) {
	rec := httptest.NewRecorder()
	s.api.Metrics().ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/metrics", nil))
	sc := bufio.NewScanner(rec.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s not found", name)
}
