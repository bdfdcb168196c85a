package store_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/store"
)

// BenchmarkInsertAPILogs writes batches of request logs, as the server's log writer does at load,
// and reports the time per log, and on PostgreSQL its backends' CPU per log: "store" is
// InsertAPILogs as the writer calls it (COPY on PostgreSQL), "tx" the same inside a transaction
// (multi-row INSERTs, as on SQLite). It runs on SQLite, or on PostgreSQL when
// SWITCHBOARD_TEST_DATABASE_URL is set.
func BenchmarkInsertAPILogs(b *testing.B) {
	ctx := context.Background()
	st, cleanup, err := store.OpenTest(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	const batch = 500
	logs := make([]store.APILog, batch)
	now := time.Now().UTC()
	for i := range logs {
		logs[i] = store.APILog{ProjectID: "prj_bench", KeyID: "key_bench", RequestID: fmt.Sprintf("req_%026d", i),
			Method: "POST", Path: "/accounts/acct_01jbenchbenchbenchbenchbench/messages", Status: 201, DurationMicros: 2400,
			IP: "127.0.0.1", UserAgent: "Go-http-client/1.1", CreatedAt: now}
	}
	// Each batch has another length, 301 to 500, as the writer's batches at load do (it writes
	// what came in 200 ms, at most 500): an INSERT of each length is a statement of its own for
	// PostgreSQL to parse and plan.
	n, rows := 0, 0
	next := func() []store.APILog {
		n++
		for i := range logs {
			logs[i].ID = 0 // an INSERT filled them in
		}
		l := logs[:301+n%200]
		rows += len(l)
		return l
	}
	for _, bc := range []struct {
		name  string
		write func() error
	}{
		{"store", func() error { return st.InsertAPILogs(ctx, next()) }},
		{"tx", func() error {
			return st.Tx(ctx, func(tx *store.Store) error { return tx.InsertAPILogs(ctx, next()) })
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rows = 0
			pg := backendCPU(b, st)
			for b.Loop() {
				if err := bc.write(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows)/1000, "µs/log")
			if st.Dialect() == store.Postgres {
				b.ReportMetric((backendCPU(b, st)-pg).Seconds()*1e6/float64(rows), "pg-µs/log")
			}
		})
	}
}

// backendCPU is the CPU time (user and system) that the PostgreSQL backends of st's database have
// used so far, from /proc (the server runs on this machine); zero on SQLite.
func backendCPU(b *testing.B, st *store.Store) time.Duration {
	if st.Dialect() != store.Postgres {
		return 0
	}
	var ticks int64
	for _, pid := range backendPIDs(b, st) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			b.Skipf("PostgreSQL's backends are not on this machine: %v", err)
		}
		// utime and stime are the 14th and 15th fields; the command (2nd) ends with ')'.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}
