package service

import (
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/store"
)

// MessagesConfig wires the Messages service.
type MessagesConfig struct {
	// Store and Carriers are required.
	Store    *store.Store
	Carriers *Carriers
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Messages sends and receives SMS and MMS through the carriers, durably: a message and its
// dispatch job are written in one transaction. (Built by the messaging core.)
type Messages struct {
	cfg MessagesConfig
}

// NewMessages returns the Messages service.
func NewMessages(cfg MessagesConfig) (*Messages, error) {
	if cfg.Store == nil || cfg.Carriers == nil {
		return nil, errors.New("service: NewMessages needs Store and Carriers")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Messages{cfg: cfg}, nil
}

// Register adds the service's job workers.
func (m *Messages) Register(*river.Workers) {}
