package service

import (
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/store"
)

// NumbersConfig wires the Numbers service.
type NumbersConfig struct {
	// Store and Carriers are required.
	Store    *store.Store
	Carriers *Carriers
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Numbers buys, attaches and releases phone numbers and registers campaigns through the
// carriers. (Built by the phone numbers and campaigns work.)
type Numbers struct {
	cfg NumbersConfig
}

// NewNumbers returns the Numbers service.
func NewNumbers(cfg NumbersConfig) (*Numbers, error) {
	if cfg.Store == nil || cfg.Carriers == nil {
		return nil, errors.New("service: NewNumbers needs Store and Carriers")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Numbers{cfg: cfg}, nil
}

// Register adds the service's job workers.
func (n *Numbers) Register(*river.Workers) {}
