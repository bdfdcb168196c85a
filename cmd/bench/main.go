// Command bench is Switchboard's load-benchmark harness: it starts the real API in-process over
// TLS on fresh databases, drives it with a keep-alive client, and prints throughput and latency
// per scenario and database. `make bench` runs it.
//
//	go run ./cmd/bench -scenario api                       # both databases, 10 s phases, concurrency 32
//	go run ./cmd/bench -db postgres -phase get -cpuprofile /tmp/p
//	go tool pprof -top /tmp/p-postgres-get.pprof             # the profile of the measured window only
//
// It is a measuring tool, not a test: it asserts nothing and never fails on slow figures; it
// prints them (with the target next to them) for a person to read. The load generator
// runs in the same process as the server, so both share the machine's cores; each phase says how
// the CPU was shared (this process, PostgreSQL, other processes), since a busy machine makes
// every figure low. PostgreSQL comes from -pg ($SWITCHBOARD_BENCH_DATABASE_URL); when it cannot
// be reached its figures are skipped and SQLite still runs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// PostgresURLEnv names the variable that gives the default -pg URL.
const PostgresURLEnv = "SWITCHBOARD_BENCH_DATABASE_URL"

// defaultPostgresURL is the local PostgreSQL of the development machine and of CI.
const defaultPostgresURL = "postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The e2e scenario's load generator and webhook receiver are this binary run again as
	// separate processes.
	if len(os.Args) > 1 && (os.Args[1] == "load" || os.Args[1] == "sink") {
		var err error
		if os.Args[1] == "load" {
			err = runLoad(os.Args[2:], os.Stdout, os.Stderr)
		} else {
			err = runSink(os.Args[2:], os.Stderr)
		}
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// Options are the command line, shared by every scenario.
type Options struct {
	// Scenarios are the scenarios to run, in order.
	Scenarios []string
	// Databases are "sqlite" and/or "postgres", in order. Defaults to both.
	Databases []string
	// PostgresURL is a postgres:// URL of a role that may create databases; each run gets a fresh
	// database that is dropped afterwards. Defaults to $SWITCHBOARD_BENCH_DATABASE_URL, else the
	// local postgres:postgres@127.0.0.1:5432.
	PostgresURL string
	// Duration is the length of each measured phase. Defaults to the scenario's own (10 s for api).
	Duration time.Duration
	// Warmup runs the same load, unmeasured, right before each measured phase. Defaults to 1 s.
	Warmup time.Duration
	// Concurrency is the number of concurrent clients (each a worker with a keep-alive
	// connection). Defaults to 32.
	Concurrency int
	// Timeout bounds every request. Defaults to 10 s.
	Timeout time.Duration
	// Phases, when non-empty, keeps only the phases with these keys (e.g. "get", "baseline").
	Phases []string
	// CPUProfile, when set, is a path prefix: each measured phase writes a CPU profile (warm-up
	// excluded) to <prefix>-<db>-<phase>.pprof.
	CPUProfile string
	// JSON prints results as JSON lines on stdout; notes go to stderr.
	JSON bool
	// ConcurrencySet is true when -concurrency was given (the e2e scenario's own default is 64).
	ConcurrencySet bool
	// Pairs is how many alternating pairs (Switchboard on PostgreSQL, then Kannel) the e2e
	// scenario runs. Defaults to 3.
	Pairs int
	// Binary is the switchboard binary the e2e scenario runs. Defaults to one built from
	// ./cmd/switchboard.
	Binary string
	// Kannel is the Kannel peer's run.sh; "none" runs without it. Defaults to
	// ../shared/peers/kannel/run.sh beside the checkout.
	Kannel string
	// Recipients is how many distinct recipients the e2e load rotates through; 0 sends every
	// message to a new one, as the Kannel peer's kload does.
	Recipients int
	// ServerPprof, when set, is a path prefix: each e2e run takes a CPU profile of the server
	// over the load window to <prefix>-<db>.pprof and of the allocations made over it to
	// <prefix>-<db>.pprof.allocs, and CPU profiles of the load process and the webhook sink to
	// <prefix>-<db>-load.pprof and <prefix>-<db>-sink.pprof.
	ServerPprof string
	// QuietWait is how long each e2e run waits for a quiet machine (other work at most 15% of
	// the CPU, as the Kannel peer's run.sh waits). Defaults to 5m.
	QuietWait time.Duration
	// PGStatements, when positive, prints that many of the e2e run's costliest statements from
	// pg_stat_statements (which the PostgreSQL server must preload, with the extension in the
	// -pg URL's database).
	PGStatements int
	// Diag, when set, is a directory where each e2e run leaves what explains its latency: every
	// request's start and latency (lat-<db>-<n>.csv), the server's log with Go's GC trace
	// (serve-<db>-<n>.log), a runtime trace of the load window's middle 5 s (trace-<db>-<n>.out),
	// the server's metrics after the load (metrics-<db>-<n>.txt) and PostgreSQL's wait events
	// sampled every 20 ms during the load (waits-<db>-<n>.txt).
	Diag string
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		o                              Options
		scenarioList, dbList, phaseStr string
	)
	fs.StringVar(&scenarioList, "scenario", "api", "comma-separated scenarios: "+strings.Join(scenarioNames(), ", "))
	fs.StringVar(&dbList, "db", "sqlite,postgres", "comma-separated databases: sqlite, postgres")
	pgDefault := os.Getenv(PostgresURLEnv)
	if pgDefault == "" {
		pgDefault = defaultPostgresURL
	}
	fs.StringVar(&o.PostgresURL, "pg", pgDefault, "PostgreSQL admin URL; each run creates and drops a fresh database ($"+PostgresURLEnv+")")
	fs.DurationVar(&o.Duration, "duration", 0, "measured length of each phase (default: the scenario's, 10s for api)")
	fs.DurationVar(&o.Warmup, "warmup", time.Second, "unmeasured warm-up before each phase")
	fs.IntVar(&o.Concurrency, "concurrency", 32, "concurrent clients")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Second, "timeout of every request")
	fs.StringVar(&phaseStr, "phase", "", "comma-separated phase keys to keep (api: get, post, baseline; webhooks: backlog, grouped, single, stalled); default all")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of each measured phase to `prefix`-<db>-<phase>.pprof")
	fs.BoolVar(&o.JSON, "json", false, "print results as JSON lines")
	fs.IntVar(&o.Pairs, "pairs", 3, "e2e: alternating pairs of runs (Switchboard on PostgreSQL, then Kannel); SQLite runs once")
	fs.StringVar(&o.Binary, "binary", "", "e2e: the switchboard binary to run (default: built from ./cmd/switchboard)")
	fs.StringVar(&o.Kannel, "kannel", "", "e2e: the Kannel peer's run.sh (default: ../shared/peers/kannel/run.sh beside the checkout; none: skip)")
	fs.IntVar(&o.Recipients, "recipients", 0, "e2e: distinct recipients in rotation (0: a new one per message, as kload)")
	fs.DurationVar(&o.QuietWait, "quiet-wait", 5*time.Minute, "e2e: how long each run waits for other work to fall to 15% of the CPU")
	fs.IntVar(&o.PGStatements, "pg-statements", 0, "e2e: print this many of the costliest statements from pg_stat_statements")
	fs.StringVar(&o.Diag, "diag", "", "e2e: a directory for each run's latency diagnostics (per-request latencies, GC trace, runtime trace unless SWITCHBOARD_BENCH_DIAG_TRACE=0 (the trace slows the server), metrics, PostgreSQL wait events)")
	fs.StringVar(&o.ServerPprof, "server-pprof", "", "e2e: write CPU profiles of the server, the load and the sink over each load window to `prefix`-<db>[-load|-sink].pprof, and the server's allocations to `prefix`-<db>.pprof.allocs")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go run ./cmd/bench [flags]\n\nScenarios:\n")
		for _, name := range scenarioNames() {
			fmt.Fprintf(fs.Output(), "  %-9s %s\n", name, scenarios[name].Doc)
		}
		fmt.Fprintf(fs.Output(), "\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	fs.Visit(func(f *flag.Flag) { o.ConcurrencySet = o.ConcurrencySet || f.Name == "concurrency" })
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	o.Scenarios, o.Databases, o.Phases = splitList(scenarioList), splitList(dbList), splitList(phaseStr)
	if err := o.validate(); err != nil {
		return err
	}

	rep := newReporter(stdout, stderr, o.JSON)
	if !slices.Equal(o.Scenarios, []string{"e2e"}) {
		rep.Note("client and server run in one process on this machine (GOMAXPROCS=%d, %d CPUs): the load generator takes part of the CPU the server would otherwise have",
			runtime.GOMAXPROCS(0), runtime.NumCPU())
		rep.Note("concurrency %d, keep-alive HTTP/1.1 over TLS, warm-up %s per phase (not counted), timeout %s per request; only 2xx count as requests",
			o.Concurrency, o.Warmup, o.Timeout)
	}
	b := &Bench{opts: o, rep: rep}
	for _, name := range o.Scenarios {
		sc := scenarios[name]
		b.scenario, b.duration = name, o.Duration
		if b.duration == 0 {
			b.duration = sc.Duration
		}
		if err := sc.Run(ctx, b); err != nil {
			return fmt.Errorf("scenario %s: %w", name, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	rep.Summary()
	return nil
}

func (o *Options) validate() error {
	if len(o.Scenarios) == 0 {
		return errors.New("-scenario: name at least one scenario")
	}
	for _, s := range o.Scenarios {
		if _, ok := scenarios[s]; !ok {
			return fmt.Errorf("-scenario: unknown scenario %q (known: %s)", s, strings.Join(scenarioNames(), ", "))
		}
	}
	if len(o.Databases) == 0 {
		return errors.New("-db: name sqlite, postgres or both")
	}
	for _, d := range o.Databases {
		if d != "sqlite" && d != "postgres" {
			return fmt.Errorf("-db: %q is not sqlite or postgres", d)
		}
	}
	if o.Concurrency < 1 {
		return errors.New("-concurrency: must be at least 1")
	}
	if o.Duration < 0 || o.Warmup < 0 || o.Timeout <= 0 {
		return errors.New("-duration and -warmup must not be negative, -timeout must be positive")
	}
	if !strings.HasPrefix(o.PostgresURL, "postgres://") && !strings.HasPrefix(o.PostgresURL, "postgresql://") && slices.Contains(o.Databases, "postgres") {
		return fmt.Errorf("-pg: %q is not a postgres:// URL", o.PostgresURL)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, strings.ToLower(part))
		}
	}
	return out
}
