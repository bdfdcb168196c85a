package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// BenchmarkStack drives requests through the whole Echo stack in-process (routing, request id,
// metrics, tracing, API log, authentication, rate limiting, validation, the handler and its
// response), without TLS or sockets, and reports the time and allocations of each:
//   - "get account": GET /accounts/{id}, answered from the account cache, so that the figure is
//     the stack's own;
//   - "send": POST /accounts/{id}/messages, the e2e load's request, which also waits for its
//     group commit (the database's share, SQLite unless SWITCHBOARD_TEST_DATABASE_URL is set).
func BenchmarkStack(b *testing.B) {
	ctx := context.Background()
	st, cleanup, err := store.OpenTest(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	// The e2e bench's serve logs at warn: no access log line per request.
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	core, err := service.NewCore(service.CoreConfig{
		Store: st, PublicURL: "https://switchboard.test", Logger: log, Retention: &store.Retention{},
		Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
			c, err := sim.New(sim.Config{Store: st.Sim(), Reporter: r, Logger: log})
			return []carriers.Carrier{c}, err
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	api, err := server.New(server.Config{Core: core, Logger: log, RateLimit: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = api.Close(ctx) }()
	p, err := st.CreateProject(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	_, key, err := st.CreateAPIKey(ctx, p.ID, false)
	if err != nil {
		b.Fatal(err)
	}
	call := func(method, path, body string, want int) []byte {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req := httptest.NewRequest(method, "https://switchboard.test"+path, rd)
		if rd != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("User-Agent", "Go-http-client/1.1")
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	var acct struct{ ID string }
	if err := json.Unmarshal(call(http.MethodPost, "/accounts", `{"name":"Bench account"}`, http.StatusCreated), &acct); err != nil {
		b.Fatal(err)
	}
	var number struct{ ID, Number string }
	if err := json.Unmarshal(call(http.MethodPost, "/accounts/"+acct.ID+"/phone_numbers", `{"type":"local","area_code":"415"}`,
		http.StatusCreated), &number); err != nil {
		b.Fatal(err)
	}
	// The number goes on an active campaign at once (the simulated carrier would review one first).
	campaign := store.NewID(store.PrefixCampaign)
	if err := st.DB().Exec(`INSERT INTO campaigns (id, project_id, account_id, carrier, status, params, created_at, updated_at)
		VALUES (?, ?, ?, 'sim', 'active', '{}', ?, ?)`, campaign, p.ID, acct.ID, time.Now(), time.Now()).Error; err != nil {
		b.Fatal(err)
	}
	if err := st.DB().Exec(`UPDATE phone_numbers SET campaign_id = ?, attachment_status = 'attached' WHERE id = ?`,
		campaign, number.ID).Error; err != nil {
		b.Fatal(err)
	}
	b.Run("get account", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			call(http.MethodGet, "/accounts/"+acct.ID, "", http.StatusOK)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "µs/req")
	})
	b.Run("send", func(b *testing.B) {
		b.ReportAllocs()
		// The e2e load's body (cmd/bench/e2e_load.go), to one recipient.
		body := `{"to":"+15550000123","from":"` + number.Number + `","body":"Load test message 1"}`
		for b.Loop() {
			call(http.MethodPost, "/accounts/"+acct.ID+"/messages", body, http.StatusCreated)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "µs/req")
	})
	api.FlushLogs()
}
