package service

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/kit"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// CoreConfig wires the whole domain: everything an API process, a test or an operator command
// needs besides HTTP.
type CoreConfig struct {
	// Store is the database. Required.
	Store *store.Store
	// Carriers builds the installation's carrier adapters, the first being the default, around
	// the core's inbound path. Required.
	Carriers func(carriers.Reporter) ([]carriers.Carrier, error)
	// PublicURL is the installation's public base URL (the iss of user tokens). Required.
	PublicURL string
	// Pacing is each sender number's throughput by type (see Pacing for the defaults).
	Pacing Pacing
	// AttachmentClient fetches message attachments. Defaults to the webhook client's SSRF guard
	// (private targets refused unless WebhookAllowPrivate), a 10 s timeout, redirects followed.
	AttachmentClient *http.Client
	// InboundMediaAttempts is how many times an inbound message's files are fetched from the
	// carrier before the missing ones are unavailable. Defaults to 10 (about 4.3 hours).
	InboundMediaAttempts int
	// JobRescueAfter is how long a job may run before another instance takes it over, as after
	// a crash. Defaults to 5 minutes.
	JobRescueAfter time.Duration
	// WebhookAllowPrivate lets webhook endpoints resolve to private, loopback, link-local and
	// unique-local addresses (local development, tests). Defaults to false: such targets are
	// refused on the resolved address at connect time.
	WebhookAllowPrivate bool
	// WebhookTimeout is how long a webhook endpoint has to answer 2xx. Defaults to 15 s.
	WebhookTimeout time.Duration
	// WebhookClient, when set, sends webhook deliveries instead of the guarded default client
	// (see webhooks.NewClient); WebhookAllowPrivate and WebhookTimeout then do not apply to it.
	WebhookClient *http.Client
	// VerificationSender is the number verification codes are sent from (E.164, held by the
	// installation). Defaults to the shared demo number.
	VerificationSender string
	// Retention is how long API logs, succeeded webhook deliveries and events are kept; the
	// leading instance prunes them every PruneInterval. Defaults to DefaultRetention; a zero
	// field of a non-zero Retention keeps that kind forever.
	Retention *store.Retention
	// FinishedJobRetention is how long completed jobs are kept (store.WorkerConfig). Defaults to
	// 1 hour.
	FinishedJobRetention time.Duration
	// Console configures the operator console's sessions and sign-in (see ConsoleConfig for the
	// defaults); its Store, Now and Logger are the core's.
	Console ConsoleConfig
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Core is the assembled domain.
type Core struct {
	Store    *store.Store
	Tokens   *Tokens
	Reports  *Reports
	Carriers *Carriers
	Numbers  *Numbers
	Messages *Messages
	// Blasts, Audiences and Verifications are built on Messages and the carriers.
	Blasts        *Blasts
	Audiences     *Audiences
	Verifications *Verifications
	Voice         *Voice
	Webhooks      *webhooks.Service
	// Console, Operator and Usage serve the installation's operators: console users and
	// sessions, projects, keys and webhook endpoints (audited), and usage reports.
	Console  *Console
	Operator *Operator
	Usage    *Usage
	// Inbox serves the embedded components: their users' inboxes, read state and live changes.
	Inbox *Inbox
	// Workers are the job handlers of every service and carrier.
	Workers *river.Workers

	rescueAfter time.Duration
	jobsKept    time.Duration
	log         *slog.Logger
}

// workerRegistrar is implemented by services and carriers that have jobs.
type workerRegistrar interface{ Register(*river.Workers) }

// NewCore assembles the domain.
func NewCore(cfg CoreConfig) (*Core, error) {
	if cfg.Store == nil || cfg.Carriers == nil || cfg.PublicURL == "" {
		return nil, errors.New("service: CoreConfig needs Store, Carriers and PublicURL")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.JobRescueAfter == 0 {
		cfg.JobRescueAfter = 5 * time.Minute
	}
	c := &Core{Store: cfg.Store, Workers: river.NewWorkers(), rescueAfter: cfg.JobRescueAfter, jobsKept: cfg.FinishedJobRetention,
		log: cfg.Logger}
	river.AddWorker(c.Workers, &purgeWorker{store: cfg.Store, now: cfg.Now, log: cfg.Logger})
	retention := DefaultRetention
	if cfg.Retention != nil {
		retention = *cfg.Retention
	}
	river.AddWorker(c.Workers, &retentionWorker{store: cfg.Store, retention: retention, now: cfg.Now, log: cfg.Logger})
	var err error
	if c.Tokens, err = NewTokens(cfg.Store, cfg.PublicURL, cfg.Now); err != nil {
		return nil, err
	}
	if c.Reports, err = NewReports(cfg.Store, cfg.Logger); err != nil {
		return nil, err
	}
	adapters, err := cfg.Carriers(c.Reports)
	if err != nil {
		return nil, fmt.Errorf("service: build carriers: %w", err)
	}
	if len(adapters) == 0 {
		return nil, errors.New("service: no carrier configured")
	}
	if c.Carriers, err = NewCarriers(adapters[0], adapters[1:]...); err != nil {
		return nil, err
	}
	if c.Numbers, err = NewNumbers(NumbersConfig{Store: cfg.Store, Carriers: c.Carriers, Now: cfg.Now, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	if c.Messages, err = NewMessages(MessagesConfig{Store: cfg.Store, Carriers: c.Carriers, PublicURL: cfg.PublicURL,
		Pacing: cfg.Pacing, HTTPClient: attachmentClient(cfg), InboundMediaAttempts: cfg.InboundMediaAttempts,
		Now: cfg.Now, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	c.Reports.messages = c.Messages
	if c.Blasts, err = NewBlasts(c.Messages); err != nil {
		return nil, err
	}
	if c.Audiences, err = NewAudiences(cfg.Store); err != nil {
		return nil, err
	}
	if c.Verifications, err = NewVerifications(VerificationsConfig{Store: cfg.Store, Carriers: c.Carriers,
		Sender: cfg.VerificationSender, Now: cfg.Now, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	if c.Voice, err = NewVoice(VoiceConfig{Store: cfg.Store, Carriers: c.Carriers, PublicURL: cfg.PublicURL, Now: cfg.Now, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	c.Reports.voice = c.Voice
	if c.Inbox, err = NewInbox(InboxConfig{Store: cfg.Store, Tokens: c.Tokens, Messages: c.Messages, Voice: c.Voice,
		Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	if c.Webhooks, err = webhooks.New(webhooks.Config{Store: cfg.Store, AllowPrivate: cfg.WebhookAllowPrivate,
		Timeout: cfg.WebhookTimeout, Client: cfg.WebhookClient, Now: cfg.Now, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	cc := cfg.Console
	cc.Store, cc.Now, cc.Logger = cfg.Store, cfg.Now, cfg.Logger
	if c.Console, err = NewConsole(cc); err != nil {
		return nil, err
	}
	if c.Operator, err = NewOperator(cfg.Store, c.Webhooks, c.Reports, cfg.Now); err != nil {
		return nil, err
	}
	if c.Usage, err = NewUsage(cfg.Store, cfg.Now); err != nil {
		return nil, err
	}
	for _, r := range []any{c.Numbers, c.Messages, c.Blasts, c.Verifications, c.Webhooks} {
		r.(workerRegistrar).Register(c.Workers)
	}
	for _, a := range adapters {
		if r, ok := a.(workerRegistrar); ok {
			r.Register(c.Workers)
		}
	}
	return c, nil
}

// Workers are an instance's background work: the job queue's workers (scheduled and rare work),
// the dispatch of the outbound queue, the webhook deliverer and, on PostgreSQL, the listener that
// brings other instances' wake-ups.
type Workers struct {
	jobs     *river.Client[*sql.Tx]
	dispatch *kit.Runner
	deliver  *kit.Runner
	listen   *kit.Runner
}

// Stop stops every loop: they finish what they have in flight until ctx ends, when what is left
// is abandoned (to be taken over once its lease ends).
func (w *Workers) Stop(ctx context.Context) error {
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i, r := range []*kit.Runner{w.dispatch, w.deliver} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = r.Stop(ctx) }()
	}
	wg.Wait()
	errs[2], errs[3] = w.jobs.Stop(ctx), w.listen.StopAndCancel(ctx)
	return errors.Join(errs...)
}

// StartWorkers starts this instance's workers; stop them with the returned Workers' Stop.
func (c *Core) StartWorkers(ctx context.Context) (*Workers, error) {
	// The hot paths (dispatch, webhook deliveries) are queues of their own; River keeps the
	// scheduled and rare work. The queues of the jobs that earlier releases enqueued per message
	// and per delivery stay, with a few workers, to drain them.
	jobs, err := c.Store.StartWorkers(ctx, store.WorkerConfig{Workers: c.Workers, PeriodicJobs: housekeeping(),
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 100}, MessagesQueue: {MaxWorkers: 4, FetchPollInterval: time.Second},
			// Blast fan-out batches are large transactions: a few at a time keep the pool for dispatch.
			// A free worker fetches the next batch at once; the poll only finds a new blast.
			BlastsQueue:    {MaxWorkers: 4, FetchPollInterval: 200 * time.Millisecond},
			webhooks.Queue: {MaxWorkers: 4, FetchPollInterval: time.Second},
			// The fan-out queue only drains the fan-out jobs of earlier releases.
			store.QueueWebhookFanout: {MaxWorkers: 2, FetchPollInterval: 2 * time.Second}},
		PollInterval: 50 * time.Millisecond, RescueStuckJobsAfter: c.rescueAfter, FinishedJobRetention: c.jobsKept})
	if err != nil {
		return nil, err
	}
	return &Workers{jobs: jobs, listen: c.startListening(ctx), dispatch: c.Messages.StartDispatch(ctx),
		deliver: c.Webhooks.StartDeliveries(ctx)}, nil
}

// startListening keeps a listener of the other instances' wake-ups (PostgreSQL), reconnecting
// with backoff when its connection fails.
func (c *Core) startListening(ctx context.Context) *kit.Runner {
	r, ctx, _ := kit.NewRunner(ctx, false)
	if c.Store.Dialect() != store.Postgres {
		return r
	}
	r.Go(func() {
		backoff := time.Second
		for ctx.Err() == nil {
			err := c.Store.Listen(ctx, func() { backoff = time.Second })
			if ctx.Err() != nil {
				return
			}
			c.log.Warn("listening for wake-ups", "err", err)
			kit.Sleep(ctx, nil, nil, nil, backoff)
			backoff = min(2*backoff, 30*time.Second)
		}
	})
	return r
}

// attachmentClient is the configured attachment client, or one with the webhooks' guard against
// private targets that follows a CDN's redirects (every connection, redirected or not, is guarded).
func attachmentClient(cfg CoreConfig) *http.Client {
	if cfg.AttachmentClient != nil {
		return cfg.AttachmentClient
	}
	c := webhooks.NewClient(cfg.WebhookAllowPrivate, AttachmentFetchTimeout)
	c.CheckRedirect = nil
	return c
}
