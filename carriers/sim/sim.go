// Package sim is the simulated carrier: the default adapter, a product feature for developers and
// tests rather than a mock. It keeps a deterministic number inventory for the US and Canada,
// reviews campaigns after a configurable delay (rejecting those whose description contains
// RejectWord), and accepts messages into a persistent outbox (the handsets' view), reporting
// delivery receipts through the Reporter like a real carrier. Its state lives in the store's
// database (sim_* tables), so `switchboard sim …` commands in another process see the same world.
package sim

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/kit"
)

// Name is the adapter's name.
const Name = "sim"

// RejectWord in a campaign's description makes the simulated review reject it.
const RejectWord = "REJECTME"

// HoldWord in a campaign's description keeps it in review until an operator forces a verdict
// (`switchboard sim campaign approve|reject`) or the campaign is withdrawn.
const HoldWord = "HOLDME"

// Config configures the simulated carrier.
type Config struct {
	// Store keeps the simulated carrier's state (store.SimStore). Required.
	Store Store
	// Reporter receives receipts, inbound messages and verdicts. Required.
	Reporter carriers.Reporter
	// ReviewDelay is how long campaign review takes. Defaults to 2 s.
	ReviewDelay time.Duration
	// Latency is how long after a submission its delivery receipt arrives. Defaults to 500 ms;
	// negative means at once.
	Latency time.Duration
	// ReceiptGrace is how much later than Latency the sweep of any started instance (Start)
	// reports a receipt that the process which accepted the message did not report: it ended
	// first, or its report failed. Defaults to 10 s.
	ReceiptGrace time.Duration
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Carrier is the simulated carrier.
type Carrier struct {
	cfg Config

	mu sync.Mutex
	// flaky counts the submissions of each reference to FlakyNumber.
	flaky map[string]int
	// reported are the ids of kept receipts reported and not yet forgotten.
	reported []int64
	// sweeper runs the sweep once started.
	sweeper *kit.Runner
	// submits stores concurrent submissions in one transaction.
	submits *kit.Batcher[*OutboxEntry, carriers.Submission]
}

// New returns the simulated carrier.
func New(cfg Config) (*Carrier, error) {
	if cfg.Store == nil || cfg.Reporter == nil {
		return nil, errors.New("sim: Config needs Store and Reporter")
	}
	if cfg.ReviewDelay == 0 {
		cfg.ReviewDelay = 2 * time.Second
	}
	if cfg.Latency == 0 {
		cfg.Latency = 500 * time.Millisecond
	}
	if cfg.ReceiptGrace <= 0 {
		cfg.ReceiptGrace = receiptGrace
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Carrier{cfg: cfg, flaky: map[string]int{}}
	c.submits = kit.NewBatcher(submitBatch, 1, c.store)
	return c, nil
}

// Name reports "sim".
func (c *Carrier) Name() string { return Name }

// Register adds the simulated carrier's job workers (reviews, receipts).
func (c *Carrier) Register(w *river.Workers) {
	c.registerCampaignWorkers(w)
	c.registerMessageWorkers(w)
}
