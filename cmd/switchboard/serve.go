package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

const serveLong = `Run the API: HTTPS on --listen, the job workers (message dispatch, webhooks, carrier
reports, retention) and the carrier adapters. Several instances may share one PostgreSQL
database.

Start order: the settings are checked, the TLS certificate is loaded and the listeners are
bound (so that a wrong setting fails at once, naming it), then the database is awaited (up to
--database-wait), pending migrations are applied, and the workers start.

Secrets have no flag, so that they show neither in the process list nor here: give them as
SWITCHBOARD_TWILIO_AUTH_TOKEN and SWITCHBOARD_SMPP_PASSWORD, as a file named by
SWITCHBOARD_TWILIO_AUTH_TOKEN_FILE / SWITCHBOARD_SMPP_PASSWORD_FILE, or in the --config file.
Every setting has such a _FILE variant.`

const serveExample = `  switchboard serve --dev-key          # local development: SQLite in ./data, a key for project "local"
  SWITCHBOARD_DATABASE_URL=postgres://switchboard:…@db:5432/switchboard \
    switchboard serve --listen 0.0.0.0:8443 --public-url https://sms.example.com
  switchboard serve --config /etc/switchboard/switchboard.yaml`

func (a *app) serveCommand() *cobra.Command {
	var devKey bool
	c := &cobra.Command{
		Use:     "serve",
		Short:   "Run the API server, its job workers and carrier adapters",
		Long:    serveLong,
		Example: serveExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.load(cmd, scopeDomain, scopeServe); err != nil {
				return err
			}
			return a.serve(cmd.Context(), devKey)
		},
	}
	c.Flags().BoolVar(&devKey, "dev-key", false, "ensure a project named 'local' and print a live API key for it, the same on every start (kept in <data-dir>/dev-key)")
	a.settings.register(c.Flags(), scopeDomain)
	a.settings.register(c.Flags(), scopeServe)
	return c
}

// listeners are the sockets serve binds before it starts anything else.
type listeners struct {
	api, plain, metrics net.Listener
	certFile, keyFile   string
}

func (l *listeners) close() {
	for _, ln := range []net.Listener{l.api, l.plain, l.metrics} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// bind loads the TLS pair and binds the listeners, naming the setting at fault.
func (a *app) bind() (*listeners, error) {
	cfg := a.cfg
	l := &listeners{certFile: cfg.TLSCert, keyFile: cfg.TLSKey}
	if l.certFile == "" {
		var created bool
		var err error
		l.certFile, l.keyFile, created, err = server.EnsureSelfSignedCert(filepath.Join(cfg.DataDir, "tls"))
		if err != nil {
			return nil, fmt.Errorf("%s: cannot create a self-signed TLS pair in %s: %v: make the directory writable, or give --tls-cert and --tls-key",
				a.settings.byName("data-dir").label(), filepath.Join(cfg.DataDir, "tls"), unwrapPathError(err))
		}
		if created {
			a.log.Info("created a self-signed TLS certificate", "cert", l.certFile)
		}
	} else if _, err := tls.LoadX509KeyPair(l.certFile, l.keyFile); err != nil {
		return nil, fmt.Errorf("%s and %s: cannot load the TLS pair: %v: give a PEM certificate and its private key",
			a.settings.byName("tls-cert").label(), a.settings.byName("tls-key").label(), unwrapPathError(err))
	}
	var err error
	if l.api, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("%s: cannot listen on %s: %v: choose a free address this user may bind",
			a.settings.byName("listen").label(), cfg.Listen, unwrapNetError(err))
	}
	for _, o := range []struct {
		name, addr string
		ln         *net.Listener
	}{{"plain-listen", cfg.PlainListen, &l.plain}, {"metrics-listen", cfg.MetricsListen, &l.metrics}} {
		if o.addr == "" {
			continue
		}
		if *o.ln, err = net.Listen("tcp", o.addr); err != nil {
			l.close()
			return nil, fmt.Errorf("%s: cannot listen on %s: %v: choose a free address this user may bind",
				a.settings.byName(o.name).label(), o.addr, unwrapNetError(err))
		}
	}
	return l, nil
}

// unwrapNetError keeps a listen error's reason: the message names the address already.
func unwrapNetError(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

func (a *app) serve(ctx context.Context, devKey bool) error {
	cfg, log := a.cfg, a.log
	ls, err := a.bind()
	if err != nil {
		return err
	}
	defer ls.close()
	defer applyRuntimeSettings(cfg, log)()
	if cfg.OTLPEndpoint != "" {
		stop, err := startTracing(ctx, cfg.OTLPEndpoint, ls.api.Addr().String())
		if err != nil {
			return err
		}
		defer stop()
		log.Info("tracing", "otlp_endpoint", cfg.OTLPEndpoint)
	}
	st, err := a.openStore(ctx, cfg.DatabaseWait)
	if err != nil {
		return err
	}
	defer st.Close()
	if cfg.AutoMigrate {
		applied, err := st.Migrate(ctx)
		if err != nil {
			return err
		}
		for _, m := range applied {
			log.Info("applied migration", "version", m.Version, "name", m.Name)
		}
	} else if n, err := st.PendingMigrations(ctx); err != nil || n > 0 {
		return fmt.Errorf("%d migrations are pending: run 'switchboard migrate' or set SWITCHBOARD_AUTO_MIGRATE=true", n)
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
		log.Info("stopping the job workers")
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
	var secret, projectID, consolePassword string
	var demo *embedDemo
	embed := server.EmbedConfig{}
	if devKey {
		if projectID, secret, err = a.localKey(ctx, st); err != nil {
			return err
		}
		if consolePassword, err = a.devConsole(ctx, core, projectID); err != nil {
			return err
		}
		if demo, err = prepareEmbedDemo(ctx, core, projectID, cfg.PublicURL); err != nil {
			return fmt.Errorf("prepare the embedded components' demo: %w", err)
		}
		embed.Demo = &demo.EmbedDemo
	}
	api, err := server.New(server.Config{Core: core, Logger: log, RateLimit: rateLimit, RateBurst: cfg.RateBurst,
		CarrierRoutes: carrierRoutes, Collectors: carrierCollectors(core), Embed: embed})
	if err != nil {
		return err
	}
	defer api.Close(context.Background())
	metricsAddr := ""
	if ls.metrics != nil {
		metricsAddr = ls.metrics.Addr().String()
		stop := serveMetrics(ls.metrics, api.Metrics(), cfg.Pprof, log)
		defer stop()
	}
	err = api.Serve(ctx, server.ListenConfig{
		Addr: cfg.Listen, CertFile: ls.certFile, KeyFile: ls.keyFile, Listener: ls.api,
		PlainAddr: cfg.PlainListen, PlainListener: ls.plain, TrustedProxies: cfg.TrustedProxies,
	}, func(addr, plain string) {
		log.Info("switchboard is serving", "https", addr, "http_refusing", plain, "metrics", metricsAddr,
			"database", string(st.Dialect()), "version", currentBuild().Version)
		if devKey {
			printDevBanner(a.stdout, addr, ls.certFile, projectID, secret, filepath.Join(cfg.DataDir, devKeyFile))
			printConsoleBanner(a.stdout, addr, consolePassword)
			printDemoBanner(a.stdout, demo, cfg.PublicURL)
		}
	})
	log.Info("shutting down", "reason", context.Cause(ctx))
	return err
}

// serveMetrics serves GET /metrics on its own listener until the returned function is called,
// and Go's runtime profiles under /debug/pprof/ when profiles is set.
func serveMetrics(ln net.Listener, metrics http.Handler, profiles bool, log *slog.Logger) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	if profiles {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener", "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
}

// operatorCore assembles the domain for an operator command: the same database and rules as
// serve, with the simulated carrier only. Adapters that need secrets or hold connections
// (Twilio, SMPP) are serve's alone; what a command enqueues is carried by the serving instances.
func (a *app) operatorCore(st *store.Store) (*service.Core, error) {
	cfg := a.cfg
	return service.NewCore(service.CoreConfig{
		Store: st, PublicURL: cfg.PublicURL, Logger: a.log, Pacing: cfg.Pacing, JobRescueAfter: cfg.JobRescueAfter,
		WebhookAllowPrivate: cfg.WebhookAllowPrivate, VerificationSender: cfg.VerificationSender,
		Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
			c, err := simCarrierOf(cfg, st, r, a.log)
			return []carriers.Carrier{c}, err
		},
	})
}

// withCore reads the domain's settings, opens and migrates the database, and runs fn with the
// operator's domain.
func (a *app) withCore(cmd *cobra.Command, fn func(context.Context, *service.Core) error) error {
	return a.withStoreOf(cmd, true, []scope{scopeDomain}, func(ctx context.Context, st *store.Store) error {
		core, err := a.operatorCore(st)
		if err != nil {
			return err
		}
		return fn(ctx, core)
	})
}

// simCarrierOf is the simulated carrier as configured.
func simCarrierOf(cfg *Config, st *store.Store, r carriers.Reporter, log *slog.Logger) (carriers.Carrier, error) {
	latency := cfg.SimLatency
	if latency == 0 {
		latency = -1 // at once, in sim.Config's terms
	}
	return sim.New(sim.Config{Store: st.Sim(), Reporter: r, ReviewDelay: cfg.SimReviewDelay, Latency: latency, Logger: log})
}

// carrierBuilders build the carrier adapters an installation can configure, by name.
var carrierBuilders = map[string]func(*Config, *store.Store, carriers.Reporter, *slog.Logger) (carriers.Carrier, error){
	sim.Name: simCarrierOf, "twilio": twilioCarrier, "telnyx": telnyxCarrier, "smpp": smppCarrier,
}

// carrierNames lists them for messages.
const carrierNames = "sim, twilio, telnyx or smpp"

// callbackCarrier is an adapter that receives its carrier's callbacks over HTTP.
type callbackCarrier interface {
	carriers.Carrier
	Handler() http.Handler
}

// buildCore assembles serve's domain over st with the configured carriers, and returns the
// adapters' callback handlers by adapter name, for the server to mount under /carriers/{name}/.
func buildCore(cfg *Config, st *store.Store, log *slog.Logger) (*service.Core, map[string]http.Handler, error) {
	routes := map[string]http.Handler{}
	retention := cfg.Retention
	core, err := service.NewCore(service.CoreConfig{
		Store: st, PublicURL: cfg.PublicURL, Logger: log, Pacing: cfg.Pacing, JobRescueAfter: cfg.JobRescueAfter,
		WebhookAllowPrivate: cfg.WebhookAllowPrivate, VerificationSender: cfg.VerificationSender,
		Retention: &retention, FinishedJobRetention: cfg.JobRetention,
		Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
			// The configured carriers, the first providing new numbers and campaigns, and the
			// simulated carrier beside them (numbers taken while the installation ran on it keep
			// working, and the shared demo number is its).
			var adapters []carriers.Carrier
			names := cfg.Carriers
			if len(names) == 0 { // a Config not validated, as specs build
				for _, n := range strings.Split(cfg.Carrier, ",") {
					names = append(names, strings.TrimSpace(n))
				}
			}
			if !slices.Contains(names, sim.Name) {
				names = append(slices.Clone(names), sim.Name)
			}
			for _, name := range names {
				build, ok := carrierBuilders[name]
				if !ok {
					return nil, fmt.Errorf("SWITCHBOARD_CARRIER: no carrier adapter named %s; use %s", name, carrierNames)
				}
				a, err := build(cfg, st, r, log)
				if err != nil {
					return nil, err
				}
				adapters = append(adapters, a)
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

// devKeyFile holds the local development key's secret, so that `serve --dev-key` prints the
// same key on every start instead of minting another.
const devKeyFile = "dev-key"

// localKey finds or creates the project named "local" and returns its development key: the one
// kept in <data-dir>/dev-key while it still authenticates for that project, otherwise a new one,
// kept there in its place. Revoking the key is how to get a new one.
func (a *app) localKey(ctx context.Context, st *store.Store) (projectID, secret string, err error) {
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
	path := filepath.Join(a.cfg.DataDir, devKeyFile)
	if b, err := os.ReadFile(path); err == nil {
		kept := strings.TrimSpace(string(b))
		principal, err := st.Authenticate(ctx, kept)
		switch {
		case err == nil && principal.ProjectID == p.ID && !principal.Demo:
			return p.ID, kept, nil
		case err == nil:
			// A key of another project (the database was replaced): leave it alone.
		case !errors.Is(err, store.ErrNotFound):
			return "", "", err
		}
	}
	k, secret, err := st.CreateAPIKey(ctx, p.ID, false)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(a.cfg.DataDir, 0o700); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		_, _ = st.RevokeAPIKey(ctx, k.ID)
		return "", "", fmt.Errorf("keep the development key in %s: %w", path, err)
	}
	a.log.Info("minted the local development key", "key_id", k.ID, "kept_in", path)
	return p.ID, secret, nil
}

func printDevBanner(w io.Writer, addr, certFile, projectID, secret, keptIn string) {
	fmt.Fprintf(w, `
Switchboard is running on https://%[1]s (self-signed certificate: %[2]s)
  project:      %[3]s
  live API key: %[4]s
  (the same key on every start, kept in %[5]s; revoke it with 'switchboard key revoke' for a new one)

Create an account:
  curl --cacert %[2]s https://%[1]s/accounts \
    -H "Authorization: Bearer %[4]s" -H "Content-Type: application/json" \
    -d '{"name":"Acme Dental"}'

`, addr, certFile, projectID, secret, keptIn)
}

// startCarriers starts the adapters that run in the background while an instance serves (the
// SMPP bind, the simulator's sweep of receipts owed by ended processes) and returns what stops
// them; serve calls it after its job workers have stopped. Operator commands start none.
func startCarriers(core *service.Core) (stop func()) {
	type background interface {
		Start()
		Close() error
	}
	var started []background
	for _, a := range core.Carriers.All() {
		if b, ok := a.(background); ok {
			b.Start()
			started = append(started, b)
		}
	}
	return func() {
		for _, b := range started {
			_ = b.Close()
		}
	}
}
