package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/switchboard/switchboard/store"
)

// The e2e scenario's fixed settings, those of issue 21 and of the Kannel peer's run.sh.
const (
	e2eConcurrency = 64
	e2eDuration    = 20 * time.Second
	// e2eSimLatency is the simulated carrier's receipt delay.
	e2eSimLatency = 50 * time.Millisecond
	// e2eDrainTimeout bounds the wait for the last webhook after the load stops, and
	// e2eDrainStall the wait without a new one.
	e2eDrainTimeout = 3 * time.Minute
	e2eDrainStall   = 20 * time.Second
)

// e2eRun is one measured run of the real binary.
type e2eRun struct {
	DB   string
	Load LoadResult
	Sink SinkCount
	// DrainS is how long after the load stopped the last webhook arrived (or the wait gave up).
	DrainS float64
	// CPULoad is CPU seconds per role over the load window; CPUAll from the load's start until
	// the last webhook arrived (the drain included).
	CPULoad, CPUAll map[string]float64
	BusyBefore      int
}

// E2ERate is the rate of distinct signed message.delivered webhooks at the receiver, from the
// load's start to the last webhook. Kannel's run.sh counts its DLR callbacks from the first to the
// last, which is the same for a pipeline whose first callback comes within milliseconds, but
// would flatter one that delivers nothing while it accepts and then all at once.
func (r *e2eRun) E2ERate() float64 {
	if r.Sink.Unique == 0 || r.Sink.Last <= r.Load.StartUnix {
		return 0
	}
	return float64(r.Sink.Unique) / (r.Sink.Last - r.Load.StartUnix)
}

// CPUPerMessageMs is the server's and PostgreSQL's CPU from the load's start to the last webhook,
// per delivered message, in ms.
func (r *e2eRun) CPUPerMessageMs() float64 {
	if r.Sink.Unique == 0 {
		return 0
	}
	return 1000 * (r.CPUAll["server"] + r.CPUAll["postgres"]) / float64(r.Sink.Unique)
}

// runE2E is the "e2e" scenario (issue 21): the real switchboard binary, driven over HTTPS by a
// separate load process, its webhooks verified and counted by a separate receiver, side by side
// with the Kannel peer's run.sh, alternating.
func runE2E(ctx context.Context, b *Bench) error {
	o := b.opts
	conc := e2eConcurrency
	if o.ConcurrencySet {
		conc = o.Concurrency
	}
	bin := o.Binary
	if bin == "" {
		dir, err := os.MkdirTemp("", "switchboard-e2e-bin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "switchboard")
		b.rep.Progress("e2e: building ./cmd/switchboard")
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/switchboard")
		cmd.Env, cmd.Stdout, cmd.Stderr = append(os.Environ(), "CGO_ENABLED=0"), os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build switchboard: %w", err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	kannel := findKannel(o.Kannel)
	recip := "a new recipient for every message (as kload does)"
	if o.Recipients > 0 {
		recip = fmt.Sprintf("%d recipients in rotation", o.Recipients)
	}
	b.rep.Note("e2e: the real binary (%s) serving HTTPS with the rate limit off, its local sender unpaced, the simulated carrier's receipts after %s, one webhook endpoint subscribed to message.delivered; a separate load process POSTs /accounts/{id}/messages closed-loop at c=%d for %s on keep-alive connections, %s; a separate receiver verifies every webhook's signature and counts them",
		bin, e2eSimLatency, conc, b.duration, recip)
	b.rep.Note("e2e: end to end = distinct signed message.delivered webhooks at the receiver per second from the first to the last (Kannel: DLR callbacks at its sink, the same way); CPU per message = server + PostgreSQL (this database's backends and the shared processes) from the load's start to the last webhook, divided by the webhooks (Kannel: bearerbox + smsbox over its load window, divided by its callbacks)")
	if kannel == "" {
		b.rep.Note("e2e: Kannel's run.sh not found (../shared/peers/kannel/run.sh or -kannel): Switchboard's rows only, no ratios")
	}
	pairs := max(1, o.Pairs)
	var pgRuns []*e2eRun
	var kRuns []*KannelRun
	var sqliteRun *e2eRun
	dbs := slices.Clone(o.Databases)
	slices.SortStableFunc(dbs, func(a, b string) int { return strings.Compare(a, b) }) // postgres, then sqlite
	for _, db := range dbs {
		n := pairs
		if db == "sqlite" {
			n = 1
		}
		for i := range n {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r, err := b.e2eOnce(ctx, bin, self, db, conc)
			if err != nil {
				if db == "postgres" && errors.Is(err, errNoPostgres) {
					b.rep.Skipped(b.scenario, db, err)
					break
				}
				return fmt.Errorf("%s run %d: %w", db, i+1, err)
			}
			b.rep.Note("%s", r.line(i+1))
			if db == "sqlite" {
				sqliteRun = r
			} else {
				pgRuns = append(pgRuns, r)
			}
			if kannel != "" && db == "postgres" {
				b.rep.Progress("e2e: Kannel run %d (%s)", i+1, kannel)
				k, err := runKannel(ctx, kannel, conc, b.duration, os.Stderr)
				if err != nil {
					return err
				}
				kRuns = append(kRuns, k)
				b.rep.Note("kannel   run %d: accepted %.0f/s p50 %.1f ms p99 %.1f ms; DLR callbacks %d at %.0f/s; cpu s (load window): bearerbox %.2f smsbox %.2f fakesmsc %.2f sink %.2f generator %.2f other %.2f; cpu/msg (bearerbox+smsbox) %.3f ms; busy before %.0f%%",
					i+1, k.AcceptedPS, k.P50ms, k.P99ms, k.DLRReceived, k.DLRRate, k.CPUBearerbox, k.CPUSmsbox, k.CPUFakesmsc,
					k.CPUSink, k.CPUGen, k.CPUOther, k.CPUPerMessageMs(), k.BusyBefore)
			}
		}
	}
	b.e2eSummary(pgRuns, kRuns, sqliteRun)
	return nil
}

func (r *e2eRun) line(n int) string {
	c, l := r.CPUAll, r.CPULoad
	return fmt.Sprintf("%-8s run %d: accepted %.0f/s (n=%d, other %d, errors %d) p50 %.1f ms p99 %.1f ms; end to end %.0f/s (%d signed webhooks, %d invalid, %d repeated, %d of the accepted missing, first %.2f s after the load's start, last %.1f s after its end); cpu s to the last webhook: server %.2f postgres %.2f load %.2f sink %.2f other %.2f (load window: server %.2f postgres %.2f); cpu/msg server+postgres %.3f ms; busy before %d%%",
		r.DB, n, r.Load.AcceptedPS, r.Load.Accepted, r.Load.NonAccepted, r.Load.Errors, r.Load.P50ms, r.Load.P99ms,
		r.E2ERate(), r.Sink.Unique, r.Sink.Invalid, r.Sink.Valid-r.Sink.Unique, max(0, r.Load.Accepted-r.Sink.Unique), r.Sink.First-r.Load.StartUnix, r.DrainS,
		c["server"], c["postgres"], c["load"], c["sink"], c["other"], l["server"], l["postgres"], r.CPUPerMessageMs(), r.BusyBefore)
}

// e2eSummary prints the medians of both sides and their ratios, against issue 21's targets.
func (b *Bench) e2eSummary(pg []*e2eRun, k []*KannelRun, sqlite *e2eRun) {
	med := func(xs []float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		s := slices.Clone(xs)
		slices.Sort(s)
		if len(s)%2 == 1 {
			return s[len(s)/2]
		}
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	col := func(f func(*e2eRun) float64) float64 {
		var xs []float64
		for _, r := range pg {
			xs = append(xs, f(r))
		}
		return med(xs)
	}
	kcol := func(f func(*KannelRun) float64) float64 {
		var xs []float64
		for _, r := range k {
			xs = append(xs, f(r))
		}
		return med(xs)
	}
	if len(pg) > 0 {
		e2e, acc, p99, cpu := col((*e2eRun).E2ERate), col(func(r *e2eRun) float64 { return r.Load.AcceptedPS }),
			col(func(r *e2eRun) float64 { return r.Load.P99ms }), col((*e2eRun).CPUPerMessageMs)
		b.rep.Note("e2e median of %d  switchboard postgres: end to end %.0f/s, accepted %.0f/s, p99 %.1f ms, cpu/msg %.3f ms", len(pg), e2e, acc, p99, cpu)
		if len(k) > 0 {
			ke2e, kacc, kp99, kcpu := kcol(func(r *KannelRun) float64 { return r.DLRRate }), kcol(func(r *KannelRun) float64 { return r.AcceptedPS }),
				kcol(func(r *KannelRun) float64 { return r.P99ms }), kcol((*KannelRun).CPUPerMessageMs)
			b.rep.Note("e2e median of %d  kannel: DLR callbacks %.0f/s, accepted %.0f/s, p99 %.1f ms, cpu/msg %.3f ms", len(k), ke2e, kacc, kp99, kcpu)
			// Ratios per pair, then their median: each pair ran under the same conditions.
			var re, ra, rp []float64
			for i := range min(len(pg), len(k)) {
				if k[i].DLRRate > 0 {
					re = append(re, pg[i].E2ERate()/k[i].DLRRate)
				}
				if k[i].AcceptedPS > 0 {
					ra = append(ra, pg[i].Load.AcceptedPS/k[i].AcceptedPS)
				}
				if k[i].P99ms > 0 {
					rp = append(rp, pg[i].Load.P99ms/k[i].P99ms)
				}
			}
			verdict := func(ok bool) string {
				if ok {
					return "met"
				}
				return "NOT met"
			}
			b.rep.Note("e2e ratio (median of pairs): end to end %.2f× Kannel's DLR-callback rate (target ≥ 1.0: %s); accepted %.2f×; p99 %.2f× Kannel's (target ≤ 1.5: %s)",
				med(re), verdict(med(re) >= 1), med(ra), med(rp), verdict(med(rp) <= 1.5))
		}
		b.rep.Note("e2e target: cpu per delivered message (server + PostgreSQL) ≤ 0.5 ms: %.3f ms: %s", cpu, map[bool]string{true: "met", false: "NOT met"}[cpu <= 0.5])
	}
	if sqlite != nil {
		s := fmt.Sprintf("e2e sqlite: end to end %.0f/s (target ≥ 1,000/s: %s)", sqlite.E2ERate(), map[bool]string{true: "met", false: "NOT met"}[sqlite.E2ERate() >= 1000])
		if len(k) > 0 {
			s += fmt.Sprintf("; %.2f× Kannel's median DLR-callback rate", sqlite.E2ERate()/kcol(func(r *KannelRun) float64 { return r.DLRRate }))
		}
		b.rep.Note("%s", s)
	}
}

var errNoPostgres = errors.New("PostgreSQL unavailable")

// e2eOnce runs the real binary once on a fresh database: it migrates and sets up a project, a live
// key and a webhook endpoint with the binary's own commands, starts the receiver and the server,
// creates an account over the API with a local number on an active campaign, then runs the load
// process and waits for the webhooks.
func (b *Bench) e2eOnce(ctx context.Context, bin, self, db string, conc int) (*e2eRun, error) {
	busy, _ := waitQuiet(15, b.opts.QuietWait, b.rep.Progress)
	dir, err := os.MkdirTemp("", "switchboard-e2e-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	dbURL, pgName, adm, dropDB, err := b.e2eDatabase(ctx, db, dir)
	if err != nil {
		return nil, err
	}
	defer dropDB()
	if b.opts.Diag != "" && adm != nil {
		// Plans of statements slower than 100 ms go to PostgreSQL's log (this database only).
		for _, set := range []string{"session_preload_libraries = 'auto_explain'", "auto_explain.log_min_duration = '100ms'"} {
			if err := adm.DB().WithContext(ctx).Exec("ALTER DATABASE " + pgName + " SET " + set).Error; err != nil {
				b.rep.Progress("e2e: diagnostics: %v", err)
			}
		}
	}
	env := append(os.Environ(), "SWITCHBOARD_DATA_DIR="+dir, "SWITCHBOARD_DATABASE_URL="+dbURL, "SWITCHBOARD_LOG_LEVEL=warn")
	cli := func(out any, args ...string) error {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("switchboard %s: %w: %s", args[0], err, stderr.String())
		}
		if out != nil {
			return json.Unmarshal(stdout.Bytes(), out)
		}
		return nil
	}
	if err := cli(nil, "migrate"); err != nil {
		return nil, err
	}
	var project struct{ ID string }
	var key struct{ Key string }
	var endpoint struct{ Secret string }
	if err := cli(&project, "project", "create", "--name", "e2e", "--json"); err != nil {
		return nil, err
	}
	if err := cli(&key, "key", "create", "--project", project.ID, "--json"); err != nil {
		return nil, err
	}
	sinkAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	if err := cli(&endpoint, "webhook", "set", "--project", project.ID, "--url", "http://"+sinkAddr+"/hooks",
		"--events", "message.delivered", "--webhook-allow-private", "--json"); err != nil {
		return nil, err
	}
	sink := exec.CommandContext(ctx, self, "sink", "-addr", sinkAddr)
	sink.Env = append(os.Environ(), "BENCH_SINK_SECRET="+endpoint.Secret)
	sink.Stderr = os.Stderr
	if err := sink.Start(); err != nil {
		return nil, err
	}
	defer stopProcess(sink, 5*time.Second)

	listen, err := freeAddr()
	if err != nil {
		return nil, err
	}
	serveLog, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	defer serveLog.Close()
	serve := exec.CommandContext(ctx, bin, "serve", "--listen", listen, "--rate-limit", "0", "--pace-local", "0",
		"--sim-latency", e2eSimLatency.String(), "--webhook-allow-private")
	serve.Env = env
	var pprofAddr string
	if b.opts.Diag != "" {
		serve.Env = append(serve.Env, "GODEBUG=gctrace=1")
	}
	if b.opts.ServerPprof != "" || b.opts.Diag != "" {
		if pprofAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		serve.Args = append(serve.Args, "--metrics-listen", pprofAddr, "--pprof")
	}
	serve.Stdout, serve.Stderr = serveLog, serveLog
	if err := serve.Start(); err != nil {
		return nil, err
	}
	defer stopProcess(serve, 30*time.Second)
	base := "https://" + listen
	client, err := waitReady(ctx, base, filepath.Join(dir, "tls", "cert.pem"), serve)
	if err != nil {
		log, _ := os.ReadFile(serveLog.Name())
		return nil, fmt.Errorf("%w\n%s", err, lastLines(log, 20))
	}
	var acct struct{ ID string }
	if err := call(ctx, client, http.MethodPost, base+"/accounts", key.Key, []byte(`{"name":"E2E account"}`), &acct); err != nil {
		return nil, fmt.Errorf("create account: %w", err)
	}
	from, err := e2eSender(ctx, dbURL, project.ID, acct.ID)
	if err != nil {
		return nil, err
	}
	// One send through the whole path before measuring, as a check that it works.
	if err := call(ctx, client, http.MethodPost, base+"/accounts/"+acct.ID+"/messages", key.Key,
		[]byte(`{"to":"+15550000000","from":"`+from+`","body":"check"}`), nil); err != nil {
		return nil, fmt.Errorf("first send: %w", err)
	}
	if _, err := waitSink(ctx, sinkAddr, 1, 30*time.Second); err != nil {
		return nil, fmt.Errorf("first webhook: %w", err)
	}
	client.CloseIdleConnections()
	if err := resetSink(sinkAddr); err != nil {
		return nil, err
	}

	load := exec.CommandContext(ctx, self, "load", "-url", base, "-ca", filepath.Join(dir, "tls", "cert.pem"),
		"-account", acct.ID, "-from", from, "-c", strconv.Itoa(conc), "-d", b.duration.String(),
		"-recipients", strconv.Itoa(b.opts.Recipients))
	var diag *e2eDiag
	if b.opts.Diag != "" {
		if diag, err = newE2EDiag(b.opts.Diag, db, pprofAddr, adm, pgName); err != nil {
			return nil, err
		}
		load.Args = append(load.Args, "-lat-out", diag.path("lat", "csv"))
	}
	if b.opts.ServerPprof != "" {
		load.Args = append(load.Args, "-cpu-profile", b.opts.ServerPprof+"-"+db+"-load.pprof")
	}
	load.Env = append(os.Environ(), "BENCH_LOAD_KEY="+key.Key)
	var loadOut bytes.Buffer
	load.Stdout, load.Stderr = &loadOut, os.Stderr
	if adm != nil {
		// Write out what the previous run (and this one's setup) left in the shared buffers now,
		// so that a checkpoint they would trigger does not land in this run's window: runs start
		// alike, as Kannel's start on an empty store.
		if err := adm.DB().WithContext(ctx).Exec("CHECKPOINT").Error; err != nil {
			b.rep.Progress("e2e: CHECKPOINT before the load failed (%v); measuring anyway", err)
		}
	}
	if adm != nil && b.opts.PGStatements > 0 {
		if err := adm.DB().WithContext(ctx).Exec("SELECT pg_stat_statements_reset()").Error; err != nil {
			return nil, fmt.Errorf("pg_stat_statements: %w", err)
		}
	}
	pc := &procCPU{pids: map[string]int{"server": serve.Process.Pid, "sink": sink.Process.Pid}, pgDatabase: pgName}
	if err := load.Start(); err != nil {
		return nil, err
	}
	// The load process's CPU comes from its own getrusage (it ends before the window does), and
	// "other" has it taken out below: procCPU does not sample it.
	a := pc.sample()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go pc.watch(watchCtx, 100*time.Millisecond)
	if diag != nil {
		diag.start(ctx, b.duration)
	}
	var stopProfile func() error
	if b.opts.ServerPprof != "" {
		stopServer := serverProfile(pprofAddr, "profile", b.opts.ServerPprof+"-"+db+".pprof", b.duration)
		stopAllocs := serverProfile(pprofAddr, "allocs", b.opts.ServerPprof+"-"+db+".pprof.allocs", b.duration)
		stopSink := serverProfile(sinkAddr, "profile", b.opts.ServerPprof+"-"+db+"-sink.pprof", b.duration)
		stopProfile = func() error { return errors.Join(stopServer(), stopAllocs(), stopSink()) }
	}
	// The load process's own CPU comes from its getrusage: sample the others at its end.
	waitErr := load.Wait()
	mid := pc.sample()
	if diag != nil {
		if err := diag.finish(serveLog.Name()); err != nil {
			b.rep.Progress("e2e: diagnostics: %v", err)
		}
	}
	if waitErr != nil {
		return nil, fmt.Errorf("load: %w", waitErr)
	}
	r := &e2eRun{DB: db, BusyBefore: busy}
	if err := json.Unmarshal(loadOut.Bytes(), &r.Load); err != nil {
		return nil, fmt.Errorf("load output: %w: %s", err, loadOut.String())
	}
	endLoad := time.Now()
	sc, err := waitSink(ctx, sinkAddr, r.Load.Accepted, e2eDrainTimeout)
	if err != nil {
		return nil, err
	}
	end := pc.sample()
	if stopProfile != nil {
		if err := stopProfile(); err != nil {
			b.rep.Progress("e2e: server profile: %v", err)
		}
	}
	if adm != nil && b.opts.PGStatements > 0 {
		b.printStatements(ctx, adm, pgName)
	}
	r.DrainS = time.Since(endLoad).Seconds()
	if sc.Last > 0 {
		r.DrainS = sc.Last - r.Load.EndUnix
	}
	r.Sink = *sc
	r.CPULoad, r.CPUAll = cpuSeconds(a, mid), cpuSeconds(a, end)
	r.CPULoad["load"], r.CPUAll["load"] = r.Load.CPUSeconds, r.Load.CPUSeconds
	r.CPULoad["other"] = max(0, r.CPULoad["other"]-r.Load.CPUSeconds)
	r.CPUAll["other"] = max(0, r.CPUAll["other"]-r.Load.CPUSeconds)
	if kinds := pgKindsLine(r.CPUAll); kinds != "" {
		b.rep.Progress("e2e: PostgreSQL's CPU seconds to the last webhook, by process: %s", kinds)
	}
	if log, _ := os.ReadFile(serveLog.Name()); len(bytes.TrimSpace(log)) > 0 {
		b.rep.Progress("e2e: the server logged:\n%s", lastLines(log, 10))
	}
	return r, nil
}

// e2eDatabase returns a fresh database's URL for a run: a SQLite file in dir, or a new PostgreSQL
// database (named sbbench_…, so that its backends can be told apart) and the function that drops
// it.
func (b *Bench) e2eDatabase(ctx context.Context, db, dir string) (dbURL, pgName string, adm *store.Store, drop func(), err error) {
	if db == "sqlite" {
		return "sqlite:" + filepath.Join(dir, "switchboard.db"), "", nil, func() {}, nil
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	adm, err = store.Open(octx, store.Config{URL: b.opts.PostgresURL, MaxOpenConns: 1})
	if err != nil {
		return "", "", nil, nil, fmt.Errorf("%w: %w", errNoPostgres, err)
	}
	name := "sbbench_" + strings.ToLower(rand.Text()[:12])
	if err := adm.DB().WithContext(ctx).Exec("CREATE DATABASE " + name).Error; err != nil {
		_ = adm.Close()
		return "", "", nil, nil, err
	}
	if b.opts.PGStatements > 0 {
		// Planning too, which execution times leave out: a statement's plans say how often it was
		// planned again (on another connection, after a VACUUM of a table it touches ...).
		if err := adm.DB().WithContext(ctx).Exec("ALTER DATABASE " + name + " SET pg_stat_statements.track_planning = on").Error; err != nil {
			b.rep.Progress("pg_stat_statements.track_planning: %v", err)
		}
	}
	u, _ := url.Parse(b.opts.PostgresURL)
	u.Path = "/" + name
	return u.String(), name, adm, func() {
		_ = adm.DB().Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error
		_ = adm.Close()
	}, nil
}

// printStatements prints the costliest statements of database name since the last reset.
func (b *Bench) printStatements(ctx context.Context, adm *store.Store, name string) {
	var rows []struct {
		Calls, Plans       int64
		TotalMs, MeanMs    float64
		PlanMs             float64
		Rows               int64
		SharedBlksDirtied  int64
		WalRecords, WalFpi int64
		Query              string
	}
	err := adm.DB().WithContext(ctx).Raw(`SELECT calls, plans, total_plan_time AS plan_ms, total_exec_time AS total_ms, mean_exec_time AS mean_ms, rows,
		shared_blks_dirtied, wal_records, wal_fpi, query FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = ?) ORDER BY total_exec_time DESC LIMIT ?`, name, b.opts.PGStatements).
		Scan(&rows).Error
	if err != nil {
		b.rep.Progress("pg_stat_statements: %v", err)
		return
	}
	for _, r := range rows {
		q := strings.Join(strings.Fields(r.Query), " ")
		if len(q) > 240 {
			q = q[:240] + "…"
		}
		b.rep.Note("pgss %8d calls %9.0f ms total %7.3f ms mean %8d rows %7d wal recs %6d plans %6.0f ms: %s", r.Calls, r.TotalMs, r.MeanMs, r.Rows,
			r.WalRecords, r.Plans, r.PlanMs, q)
	}
}

// e2eSender gives the account a local number attached to an active campaign of the simulated
// carrier, written directly (a campaign's review would take the simulated carrier's delay), and
// returns the number.
func e2eSender(ctx context.Context, dbURL, projectID, accountID string) (string, error) {
	st, err := store.Open(ctx, store.Config{URL: dbURL, MaxOpenConns: 1})
	if err != nil {
		return "", err
	}
	defer st.Close()
	return insertSender(ctx, st, projectID, accountID)
}

// insertSender writes a campaign of the simulated carrier, active, and a local number attached
// to it for an account, and returns the number.
func insertSender(ctx context.Context, st *store.Store, projectID, accountID string) (string, error) {
	db := st.DB().WithContext(ctx)
	now := time.Now().UTC()
	cid, nid, number := store.NewID(store.PrefixCampaign), store.NewID(store.PrefixPhoneNumber), "+19995550100"
	if err := db.Exec(`INSERT INTO campaigns (id, project_id, account_id, carrier, status, params, created_at, updated_at)
		VALUES (?, ?, ?, 'sim', 'active', '{}', ?, ?)`, cid, projectID, accountID, now, now).Error; err != nil {
		return "", fmt.Errorf("bench campaign: %w", err)
	}
	if err := db.Exec(`INSERT INTO phone_numbers (id, project_id, account_id, number, type, country, name, metadata, carrier,
		campaign_id, attachment_status, created_at, updated_at) VALUES (?, ?, ?, ?, 'local', 'US', 'Bench', '{}', 'sim', ?, 'attached', ?, ?)`,
		nid, projectID, accountID, number, cid, now, now).Error; err != nil {
		return "", fmt.Errorf("bench number: %w", err)
	}
	return number, nil
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitReady waits until the server answers /readyz with 200 over TLS, and returns a client that
// trusts its certificate.
func waitReady(ctx context.Context, base, certFile string, p *exec.Cmd) (*http.Client, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if p.ProcessState != nil {
			return nil, errors.New("serve exited")
		}
		if pem, err := os.ReadFile(certFile); err == nil {
			roots := x509.NewCertPool()
			if roots.AppendCertsFromPEM(pem) {
				c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
					TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
				if resp, err := c.Get(base + "/readyz"); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						return c, nil
					}
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, errors.New("serve did not become ready")
}

func sinkCount(addr string) (*SinkCount, error) {
	resp, err := http.Get("http://" + addr + "/count")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var c SinkCount
	return &c, json.NewDecoder(resp.Body).Decode(&c)
}

func resetSink(addr string) error {
	req, _ := http.NewRequest(http.MethodDelete, "http://"+addr+"/count", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// waitSink waits until the receiver has n distinct webhooks, or none came for e2eDrainStall, or
// timeout passed; it returns the last count (an error only when the receiver cannot be asked).
func waitSink(ctx context.Context, addr string, n int64, timeout time.Duration) (*SinkCount, error) {
	deadline := time.Now().Add(timeout)
	var last *SinkCount
	lastChange := time.Now()
	for {
		c, err := sinkCount(addr)
		if err != nil {
			if last == nil && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			return last, err
		}
		if last == nil || c.Unique != last.Unique {
			lastChange = time.Now()
		}
		last = c
		if c.Unique >= n || time.Now().After(deadline) || time.Since(lastChange) > e2eDrainStall || ctx.Err() != nil {
			return c, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopProcess stops a process this bench started: SIGTERM, then SIGKILL after grace.
func stopProcess(c *exec.Cmd, grace time.Duration) {
	if c.Process == nil || c.ProcessState != nil {
		return
	}
	_ = c.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = c.Process.Kill()
		<-done
	}
}

// serverProfile takes a profile of a process over d from its /debug/pprof/ (the server's metrics
// listener with serve --pprof, the sink's listener), written to path: kind "profile" is the
// CPU's, "allocs" the allocations made over d (a delta profile); the returned function waits for
// it.
func serverProfile(addr, kind, path string, d time.Duration) func() error {
	done := make(chan error, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", addr, kind, int(d.Seconds())))
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			done <- fmt.Errorf("profile: %s (does this binary take --pprof?)", resp.Status)
			return
		}
		f, err := os.Create(path)
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		_ = f.Close()
		done <- err
	}()
	return func() error { return <-done }
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
