// Command switchboard runs the Switchboard messaging API and its operator tasks: serving,
// migrations, projects, API keys and request logs. It is the only place that reads flags and
// environment variables.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	_ "time/tzdata" // IANA zones for account time_zone validation on machines without them

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

const usage = `switchboard: a self-hostable business messaging API.

Usage:
  switchboard serve [--dev-key]             run the API (applies pending migrations first)
  switchboard migrate                       apply pending database migrations
  switchboard project create --name N       create a project
  switchboard project list                  list projects
  switchboard project lock|unlock prj_…     lock (403 platform_locked) or unlock a project
  switchboard key create --project prj_… [--demo]
  switchboard key list --project prj_…
  switchboard key revoke key_…
  switchboard logs --project prj_… [--limit N]
  switchboard sim …                         drive the simulated carrier (see 'switchboard sim')
  switchboard webhook …                     webhook endpoints, deliveries and replays (see 'switchboard webhook')

Every command takes --json for machine-readable output, and the configuration flags
(--data-dir, --database-url, ...; see 'switchboard serve -h') or SWITCHBOARD_* variables.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard:", err)
		os.Exit(1)
	}
}

// run executes one command line; it is main without the process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cmd, rest := args[0], args[1:]
	if (cmd == "project" || cmd == "key") && len(rest) > 0 {
		cmd, rest = cmd+" "+rest[0], rest[1:]
	}
	fs := flag.NewFlagSet("switchboard "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, finish := bindConfig(fs)
	asJSON := fs.Bool("json", false, "print machine-readable JSON")
	o := &output{w: stdout, json: asJSON}
	switch cmd {
	case "serve":
		devKey := fs.Bool("dev-key", false, "ensure a project named 'local' and print a fresh live API key for it")
		if err := parse(fs, rest, finish); err != nil {
			return err
		}
		return serve(ctx, cfg, *devKey, o, stderr)
	case "migrate":
		if err := parse(fs, rest, finish); err != nil {
			return err
		}
		return withStore(ctx, cfg, false, func(st *store.Store) error {
			applied, err := st.Migrate(ctx)
			if err != nil {
				return err
			}
			return o.print(map[string]any{"applied": applied}, func(w io.Writer) {
				if len(applied) == 0 {
					fmt.Fprintln(w, "database is up to date")
				}
				for _, m := range applied {
					fmt.Fprintf(w, "applied %d: %s\n", m.Version, m.Name)
				}
			})
		})
	case "project create":
		name := fs.String("name", "", "project name (required)")
		if err := parse(fs, rest, finish); err != nil {
			return err
		}
		if strings.TrimSpace(*name) == "" {
			return errors.New("project create: --name is required")
		}
		return withStore(ctx, cfg, true, func(st *store.Store) error {
			p, err := st.CreateProject(ctx, *name)
			if err != nil {
				return err
			}
			return o.print(projectJSON(p), func(w io.Writer) { fmt.Fprintf(w, "created project %s (%s)\n", p.ID, p.Name) })
		})
	case "project list":
		if err := parse(fs, rest, finish); err != nil {
			return err
		}
		return withStore(ctx, cfg, true, func(st *store.Store) error {
			ps, err := st.ListProjects(ctx)
			if err != nil {
				return err
			}
			out := make([]map[string]any, 0, len(ps))
			for i := range ps {
				out = append(out, projectJSON(&ps[i]))
			}
			return o.print(out, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tLOCKED\tCREATED")
				for _, p := range ps {
					fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", p.ID, p.Name, p.LockedAt != nil, p.CreatedAt.Format(time.RFC3339))
				}
				_ = tw.Flush()
			})
		})
	case "project lock", "project unlock":
		if err := parseInterspersed(fs, rest, finish); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return fmt.Errorf("%s: give one project id", cmd)
		}
		return withStore(ctx, cfg, true, func(st *store.Store) error {
			p, err := st.SetProjectLocked(ctx, fs.Arg(0), cmd == "project lock")
			if err != nil {
				return err
			}
			return o.print(projectJSON(p), func(w io.Writer) {
				fmt.Fprintf(w, "project %s locked: %v\n", p.ID, p.LockedAt != nil)
			})
		})
	case "key create":
		project := fs.String("project", "", "project id (required)")
		demo := fs.Bool("demo", false, "create a demo key (sk_demo_) instead of a live one")
		if err := parse(fs, rest, finish); err != nil {
			return err
		}
		if *project == "" {
			return errors.New("key create: --project is required")
		}
		return withStore(ctx, cfg, true, func(st *store.Store) error {
			k, secret, err := st.CreateAPIKey(ctx, *project, *demo)
			if err != nil {
				return err
			}
			return o.print(map[string]any{"id": k.ID, "key": secret, "project_id": k.ProjectID, "kind": k.Kind},
				func(w io.Writer) {
					fmt.Fprintf(w, "created %s key %s for %s\n%s\n(shown once: store it now)\n", k.Kind, k.ID, k.ProjectID, secret)
				})
		})
	case "key list":
		project := fs.String("project", "", "project id (required)")
		if err := parse(fs, rest, finish); err != nil {
			return err
		}
		if *project == "" {
			return errors.New("key list: --project is required")
		}
		return withStore(ctx, cfg, true, func(st *store.Store) error {
			ks, err := st.ListAPIKeys(ctx, *project)
			if err != nil {
				return err
			}
			out := make([]map[string]any, 0, len(ks))
			for _, k := range ks {
				out = append(out, map[string]any{"id": k.ID, "project_id": k.ProjectID, "kind": k.Kind, "hint": k.Hint,
					"created_at": k.CreatedAt, "revoked_at": k.RevokedAt})
			}
			return o.print(out, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tKIND\tHINT\tCREATED\tREVOKED")
				for _, k := range ks {
					revoked := "-"
					if k.RevokedAt != nil {
						revoked = k.RevokedAt.Format(time.RFC3339)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.Kind, k.Hint, k.CreatedAt.Format(time.RFC3339), revoked)
				}
				_ = tw.Flush()
			})
		})
	case "key revoke":
		if err := parseInterspersed(fs, rest, finish); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("key revoke: give one key id")
		}
		return withStore(ctx, cfg, true, func(st *store.Store) error {
			k, err := st.RevokeAPIKey(ctx, fs.Arg(0))
			if err != nil {
				return err
			}
			return o.print(map[string]any{"id": k.ID, "revoked_at": k.RevokedAt}, func(w io.Writer) {
				fmt.Fprintf(w, "revoked %s\n", k.ID)
			})
		})
	case "sim":
		return simCommand(ctx, rest, stdout, stderr)
	case "webhook":
		return webhookCommand(ctx, rest, stdout, stderr)
	case "logs":
		project := fs.String("project", "", "project id (required)")
		limit := fs.Int("limit", 50, "how many of the most recent requests")
		if err := parse(fs, rest, finish); err != nil {
			return err
		}
		if *project == "" {
			return errors.New("logs: --project is required")
		}
		return withStore(ctx, cfg, true, func(st *store.Store) error {
			logs, err := st.ListAPILogs(ctx, *project, *limit)
			if err != nil {
				return err
			}
			out := make([]map[string]any, 0, len(logs))
			for _, l := range logs {
				out = append(out, map[string]any{"time": l.CreatedAt, "method": l.Method, "path": l.Path, "status": l.Status,
					"duration_ms": float64(l.DurationMicros) / 1000, "key_id": l.KeyID, "request_id": l.RequestID})
			}
			return o.print(out, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TIME\tMETHOD\tPATH\tSTATUS\tDURATION\tKEY\tREQUEST")
				for _, l := range logs {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1fms\t%s\t%s\n", l.CreatedAt.Format(time.RFC3339), l.Method, l.Path,
						l.Status, float64(l.DurationMicros)/1000, l.KeyID, l.RequestID)
				}
				_ = tw.Flush()
			})
		})
	}
	return fmt.Errorf("unknown command %q\n\n%s", strings.Join(args[:min(2, len(args))], " "), usage)
}

// parse parses a command's flags; the flag package stops at the first argument, so a command
// with subcommands of its own (sim) gets the rest in fs.Args.
func parse(fs *flag.FlagSet, args []string, finish func() error) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	return finish()
}

// parseInterspersed parses the flags of a command that takes ids as arguments, which may come
// before or after them (`key revoke key_… --json`); fs.Args then holds the ids.
func parseInterspersed(fs *flag.FlagSet, args []string, finish func() error) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	// "--" ends the flags: what follows it is what fs.Args reports.
	if err := fs.Parse(append([]string{"--"}, positional...)); err != nil {
		return err
	}
	return finish()
}

func projectJSON(p *store.Project) map[string]any {
	return map[string]any{"id": p.ID, "name": p.Name, "locked": p.LockedAt != nil, "created_at": p.CreatedAt}
}

// output prints a command's result as JSON or as text.
type output struct {
	w    io.Writer
	json *bool
}

func (o *output) print(v any, text func(io.Writer)) error {
	if *o.json {
		enc := json.NewEncoder(o.w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(o.w)
	return nil
}

// withStore opens the database for one operator command; migrate applies pending migrations first.
func withStore(ctx context.Context, cfg *Config, migrate bool, fn func(*store.Store) error) error {
	st, err := store.Open(ctx, store.Config{URL: cfg.DatabaseURL})
	if err != nil {
		return err
	}
	defer st.Close()
	if migrate {
		if _, err := st.Migrate(ctx); err != nil {
			return err
		}
	}
	return fn(st)
}

func serve(ctx context.Context, cfg *Config, devKey bool, o *output, stderr io.Writer) error {
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	return withStore(ctx, cfg, cfg.AutoMigrate, func(st *store.Store) error {
		if !cfg.AutoMigrate {
			if n, err := st.PendingMigrations(ctx); err != nil || n > 0 {
				return fmt.Errorf("%d migrations are pending: run 'switchboard migrate' or set SWITCHBOARD_AUTO_MIGRATE=true", n)
			}
		}
		core, carrierRoutes, err := buildCore(cfg, st, log)
		if err != nil {
			return err
		}
		// Deferred before the workers' stop, so it runs after it: the bind outlives the dispatch.
		defer startCarriers(core)()
		workers, err := core.StartWorkers(ctx)
		if err != nil {
			return err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := workers.Stop(sctx); err != nil {
				log.Warn("stop job workers", "err", err)
			}
		}()
		// 0 means "no limit" on the command line but "the default" in server.Config.
		rateLimit := cfg.RateLimit
		if rateLimit == 0 {
			rateLimit = -1
		}
		api, err := server.New(server.Config{Core: core, Logger: log, RateLimit: rateLimit, RateBurst: cfg.RateBurst,
			CarrierRoutes: carrierRoutes})
		if err != nil {
			return err
		}
		defer api.Close(context.Background())
		certFile, keyFile := cfg.TLSCert, cfg.TLSKey
		if certFile == "" {
			var created bool
			certFile, keyFile, created, err = server.EnsureSelfSignedCert(cfg.DataDir + "/tls")
			if err != nil {
				return err
			}
			if created {
				log.Info("created a self-signed TLS certificate", "cert", certFile)
			}
		}
		var secret, projectID string
		if devKey {
			if projectID, secret, err = localKey(ctx, st); err != nil {
				return err
			}
		}
		return api.Serve(ctx, server.ListenConfig{
			Addr: cfg.Listen, CertFile: certFile, KeyFile: keyFile,
			PlainAddr: cfg.PlainListen, TrustedProxies: cfg.TrustedProxies,
		}, func(addr, plain string) {
			log.Info("switchboard is serving", "https", addr, "http_refusing", plain, "database", string(st.Dialect()))
			if devKey {
				printDevBanner(o.w, addr, certFile, projectID, secret)
			}
		})
	})
}

// newCore assembles the domain over st with the configured carriers. Operator commands that act
// on the domain (sim, webhooks) use it too, so they behave exactly as the server would.
func newCore(cfg *Config, st *store.Store, log *slog.Logger) (*service.Core, error) {
	core, _, err := buildCore(cfg, st, log)
	return core, err
}

// callbackCarrier is an adapter that receives its carrier's callbacks over HTTP.
type callbackCarrier interface {
	carriers.Carrier
	Handler() http.Handler
}

// buildCore is newCore that also returns the adapters' callback handlers by adapter name, for
// the server to mount under /carriers/{name}/.
func buildCore(cfg *Config, st *store.Store, log *slog.Logger) (*service.Core, map[string]http.Handler, error) {
	routes := map[string]http.Handler{}
	core, err := service.NewCore(service.CoreConfig{
		Store: st, PublicURL: cfg.PublicURL, Logger: log, Pacing: cfg.Pacing, JobRescueAfter: cfg.JobRescueAfter,
		WebhookAllowPrivate: cfg.WebhookAllowPrivate, VerificationSender: cfg.VerificationSender,
		Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
			var adapters []carriers.Carrier
			switch cfg.Carrier {
			case "sim":
				c, err := sim.New(sim.Config{Store: st.Sim(), Reporter: r, ReviewDelay: cfg.SimReviewDelay, Latency: simLatency(cfg), Logger: log})
				if err != nil {
					return nil, err
				}
				adapters = []carriers.Carrier{c}
			case "twilio":
				var err error
				if adapters, err = twilioCarriers(cfg, st, r, log); err != nil {
					return nil, err
				}
			case "smpp":
				var err error
				if adapters, err = smppCarriers(cfg, st, r, log); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("SWITCHBOARD_CARRIER=%s: no such carrier adapter; use sim, twilio or smpp", cfg.Carrier)
			}
			for _, a := range adapters {
				if cb, ok := a.(callbackCarrier); ok {
					routes[a.Name()] = cb.Handler()
				}
			}
			return adapters, nil
		},
	})
	return core, routes, err
}

// simLatency is the simulated receipt latency in sim.Config's terms (negative: at once).
func simLatency(cfg *Config) time.Duration {
	if cfg.SimLatency == 0 {
		return -1
	}
	return cfg.SimLatency
}

// localKey finds or creates the project named "local" and mints a live key for it.
func localKey(ctx context.Context, st *store.Store) (projectID, secret string, err error) {
	ps, err := st.ListProjects(ctx)
	if err != nil {
		return "", "", err
	}
	var p *store.Project
	for i := range ps {
		if ps[i].Name == "local" {
			p = &ps[i]
		}
	}
	if p == nil {
		if p, err = st.CreateProject(ctx, "local"); err != nil {
			return "", "", err
		}
	}
	_, secret, err = st.CreateAPIKey(ctx, p.ID, false)
	return p.ID, secret, err
}

func printDevBanner(w io.Writer, addr, certFile, projectID, secret string) {
	fmt.Fprintf(w, `
Switchboard is running on https://%[1]s (self-signed certificate: %[2]s)
  project:      %[3]s
  live API key: %[4]s

Create an account:
  curl --cacert %[2]s https://%[1]s/accounts \
    -H "Authorization: Bearer %[4]s" -H "Content-Type: application/json" \
    -d '{"name":"Acme Dental"}'

`, addr, certFile, projectID, secret)
}
