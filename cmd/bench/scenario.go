package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/switchboard/switchboard/store"
)

// Scenario is one benchmark: what it drives and how long its phases last by default.
type Scenario struct {
	// Doc is the one-line description -h prints.
	Doc string
	// Duration is the measured length of each phase when -duration is not given.
	Duration time.Duration
	// Run performs the scenario: usually b.EachDatabase, a server per database, and b.Measure
	// per phase.
	Run func(ctx context.Context, b *Bench) error
}

// scenarios is the registry. Later issues add "send" (issue 4), "webhooks" (5), "blast" (6) and
// "smpp" (8) here, each in its own file, reusing EachDatabase, startAPI and Measure.
var scenarios = map[string]Scenario{
	"api": {
		Doc:      "authenticated GET /accounts/{id} and POST /accounts/{account_id}/contacts vs an empty Echo handler",
		Duration: 10 * time.Second,
		Run:      runAPI,
	},
	"auth": {
		Doc:      "issue 21's target 4: authenticated GET /accounts/{id} vs an empty Echo handler over TLS, in 3 alternating pairs per database, with the median ratio",
		Duration: 5 * time.Second,
		Run:      runAuth,
	},
	"send": {
		Doc:      "POST /accounts/{account_id}/messages (32 clients) and the end-to-end rate of messages reaching delivered",
		Duration: 20 * time.Second,
		Run:      runSend,
	},
	"blast": {
		Doc:      "one POST /accounts/{account_id}/blasts of 100,000 numbers (PostgreSQL): time to accept, fan-out rate, time until all delivered",
		Duration: time.Minute,
		Run:      runBlast,
	},
	"webhooks": {
		Doc:      "a backlog of 20,000 events, then events offered at 2,500/s (group-committed, one per transaction, then group-committed beside another tenant's endpoint that never answers), delivered as signed webhooks to a local receiver: deliveries/s and event-to-arrival lag",
		Duration: 20 * time.Second,
		Run:      runWebhooks,
	},
	"embed": {
		Doc:      "the embedded inbox's first render (page, script, styles, first page of conversations) over HTTP and in Chromium, for 100, 1,000 and 10,000 conversations, and the bundle's gzipped size",
		Duration: time.Second,
		Run:      runEmbed,
	},
	"e2e": {
		Doc:      "the real binary on PostgreSQL (alternating with the Kannel peer's run.sh) and once on SQLite, driven over HTTPS by a separate load process at c=64: accepted/s, p99, signed webhooks/s at a local receiver, CPU per message, ratios to Kannel",
		Duration: e2eDuration,
		Run:      runE2E,
	},
	"smpp": {
		Doc:      "single-part messages submitted through the SMPP adapter (window 10) to a fake SMSC on loopback: submissions/s and receipts/s",
		Duration: 10 * time.Second,
		Run:      runSMPP,
	},
}

func scenarioNames() []string {
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Bench is what a scenario runs with: the options, the reporter, and helpers.
type Bench struct {
	opts     Options
	rep      *Reporter
	scenario string
	// duration is the measured length of each phase of the current scenario.
	duration time.Duration
}

// Database is a fresh, migrated database for one scenario run.
type Database struct {
	// Name is "sqlite" or "postgres".
	Name  string
	Store *store.Store
	// Dir is a temporary directory for this run (SQLite file, TLS pair, ...), removed afterwards.
	Dir string
}

// EachDatabase runs fn once per -db database, each on a fresh migrated database that is removed
// (SQLite file) or dropped (PostgreSQL) afterwards. An unreachable PostgreSQL is reported as
// skipped and the others still run.
func (b *Bench) EachDatabase(ctx context.Context, fn func(ctx context.Context, db *Database) error) error {
	for _, name := range b.opts.Databases {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		dir, err := os.MkdirTemp("", "switchboard-bench-"+name+"-")
		if err != nil {
			return err
		}
		st, cleanup, err := openDatabase(ctx, name, dir, b.opts.PostgresURL)
		if err != nil {
			_ = os.RemoveAll(dir)
			if name == "postgres" {
				b.rep.Skipped(b.scenario, name, err)
				continue
			}
			return fmt.Errorf("open %s: %w", name, err)
		}
		b.rep.Progress("scenario %s: %s database ready", b.scenario, name)
		err = fn(ctx, &Database{Name: name, Store: st, Dir: dir})
		cleanup()
		_ = os.RemoveAll(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// openDatabase opens a fresh migrated database through store.OpenTest, the same helper the test
// suites use: a SQLite file in dir, or a new PostgreSQL database created through adminURL and
// dropped by cleanup. OpenTest takes the PostgreSQL URL from its environment variable, so this
// sets (or clears) it for the call; cmd/ is where configuration is read and written.
func openDatabase(ctx context.Context, name, dir, adminURL string) (*store.Store, func(), error) {
	prev, had := os.LookupEnv(store.TestDatabaseEnv)
	defer func() {
		if had {
			_ = os.Setenv(store.TestDatabaseEnv, prev)
		} else {
			_ = os.Unsetenv(store.TestDatabaseEnv)
		}
	}()
	if name == "postgres" {
		_ = os.Setenv(store.TestDatabaseEnv, adminURL)
	} else {
		_ = os.Unsetenv(store.TestDatabaseEnv)
	}
	// Bound the connection attempt so an unreachable server is a prompt skip, not a hang.
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return store.OpenTest(octx, filepath.Join(dir, "db"))
}

// keep reports whether a phase key survives -phase.
func (b *Bench) keep(phase string) bool {
	return len(b.opts.Phases) == 0 || slices.Contains(b.opts.Phases, phase)
}
