package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard/switchboard/store"
)

// e2eDiag gathers what explains one e2e run's latency (-diag): the server runs with Go's GC
// trace and its profiles on, the load records every request, a runtime trace covers the middle
// of the load window, PostgreSQL's wait events are sampled during it, and the server's metrics
// are read after it.
type e2eDiag struct {
	dir, tag string
	// pprofAddr is the server's metrics listener.
	pprofAddr string
	adm       *store.Store
	pgName    string
	stop      chan struct{}
	wg        sync.WaitGroup
	waits     map[string]int
	timeline  strings.Builder
	samples   int
	errs      []string
	mu        sync.Mutex
}

// diagRuns numbers the runs of this process, to name their files.
var diagRuns = map[string]int{}

func newE2EDiag(dir, db, pprofAddr string, adm *store.Store, pgName string) (*e2eDiag, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	diagRuns[db]++
	return &e2eDiag{dir: dir, tag: fmt.Sprintf("%s-%d", db, diagRuns[db]), pprofAddr: pprofAddr,
		stop: make(chan struct{}), waits: map[string]int{}, adm: adm, pgName: pgName}, nil
}

func (d *e2eDiag) path(kind, ext string) string {
	return filepath.Join(d.dir, kind+"-"+d.tag+"."+ext)
}

// start begins sampling PostgreSQL's wait events of database name (when adm is set) and takes
// a runtime trace of the server over the middle 5 s of a load of length dur.
func (d *e2eDiag) start(ctx context.Context, dur time.Duration) {
	adm, name := d.adm, d.pgName
	if adm != nil {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-d.stop:
					return
				case <-ctx.Done():
					return
				case <-t.C:
				}
				var rows []struct{ State, Wait, Query string }
				err := adm.DB().WithContext(ctx).Raw(`SELECT COALESCE(state, '') AS state,
					COALESCE(wait_event_type || ':' || wait_event, 'cpu') AS wait, LEFT(regexp_replace(query, '\s+', ' ', 'g'), 60) AS query
					FROM pg_stat_activity WHERE (datname = ? OR backend_type <> 'client backend') AND pid <> pg_backend_pid()
					AND state IS DISTINCT FROM 'idle'`, name).Scan(&rows).Error
				d.mu.Lock()
				if err != nil {
					d.errs = append(d.errs, err.Error())
				}
				d.samples++
				at := float64(time.Now().UnixMicro()) / 1e6
				for _, r := range rows {
					k := r.State + " | " + r.Wait + " | " + r.Query
					d.waits[k]++
					if !strings.HasPrefix(r.Wait, "Activity:") {
						fmt.Fprintf(&d.timeline, "%.3f %s\n", at, k)
					}
				}
				d.mu.Unlock()
			}
		}()
	}
	if os.Getenv("SWITCHBOARD_BENCH_DIAG_TRACE") == "0" {
		return // the runtime trace slows the server down: a run without it shows the latencies as they are
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		select {
		case <-time.After(max(0, dur/2-2500*time.Millisecond)):
		case <-d.stop:
			return
		}
		if err := d.fetch("/debug/pprof/trace?seconds=5", d.path("trace", "out")); err != nil {
			d.mu.Lock()
			d.errs = append(d.errs, "trace: "+err.Error())
			d.mu.Unlock()
		}
	}()
}

// finish stops the sampling, writes the wait events and the server's metrics, and copies the
// server's log.
func (d *e2eDiag) finish(serveLog string) error {
	close(d.stop)
	d.wg.Wait()
	type count struct {
		key string
		n   int
	}
	var counts []count
	for k, n := range d.waits {
		counts = append(counts, count{k, n})
	}
	slices.SortFunc(counts, func(a, b count) int { return b.n - a.n })
	var b strings.Builder
	fmt.Fprintf(&b, "%d samples every 20 ms; backends per sample in each state | wait | query\n", d.samples)
	for _, c := range counts {
		fmt.Fprintf(&b, "%7.3f %s\n", float64(c.n)/float64(max(1, d.samples)), c.key)
	}
	for _, e := range d.errs {
		fmt.Fprintf(&b, "error: %s\n", e)
	}
	if err := os.WriteFile(d.path("waits", "txt"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(d.path("waitlog", "txt"), []byte(d.timeline.String()), 0o644); err != nil {
		return err
	}
	if err := d.statements(); err != nil {
		return err
	}
	if err := d.fetch("/metrics", d.path("metrics", "txt")); err != nil {
		return err
	}
	log, err := os.ReadFile(serveLog)
	if err != nil {
		return err
	}
	return os.WriteFile(d.path("serve", "log"), log, 0o644)
}

// fetch writes what the server's metrics listener answers at path to file.
func (d *e2eDiag) fetch(path, file string) error {
	resp, err := http.Get("http://" + d.pprofAddr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// statements writes the database's statements from pg_stat_statements with their slowest run
// (statements-<db>-<n>.txt), slowest first.
func (d *e2eDiag) statements() error {
	if d.adm == nil {
		return nil
	}
	var rows []struct {
		Calls                   int64
		MeanMs, MaxMs, StddevMs float64
		Query                   string
	}
	err := d.adm.DB().Raw(`SELECT calls, mean_exec_time AS mean_ms, max_exec_time AS max_ms, stddev_exec_time AS stddev_ms,
		LEFT(regexp_replace(query, '\s+', ' ', 'g'), 160) AS query FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = ?) ORDER BY max_exec_time DESC LIMIT 40`, d.pgName).Scan(&rows).Error
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("calls mean_ms max_ms stddev_ms query\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%7d %8.3f %8.1f %8.2f %s\n", r.Calls, r.MeanMs, r.MaxMs, r.StddevMs, r.Query)
	}
	return os.WriteFile(d.path("statements", "txt"), []byte(b.String()), 0o644)
}
