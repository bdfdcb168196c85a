package service

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
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
	// Workers are the job handlers of every service and carrier.
	Workers *river.Workers
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
	c := &Core{Store: cfg.Store, Workers: river.NewWorkers()}
	river.AddWorker(c.Workers, &purgeWorker{store: cfg.Store, now: cfg.Now, log: cfg.Logger})
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
	if c.Messages, err = NewMessages(MessagesConfig{Store: cfg.Store, Carriers: c.Carriers, Now: cfg.Now, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	for _, r := range []any{c.Numbers, c.Messages} {
		r.(workerRegistrar).Register(c.Workers)
	}
	for _, a := range adapters {
		if r, ok := a.(workerRegistrar); ok {
			r.Register(c.Workers)
		}
	}
	return c, nil
}

// StartWorkers starts this instance's job workers; stop them with the returned client's Stop.
func (c *Core) StartWorkers(ctx context.Context) (*river.Client[*sql.Tx], error) {
	return c.Store.StartWorkers(ctx, store.WorkerConfig{Workers: c.Workers, PeriodicJobs: housekeeping()})
}
