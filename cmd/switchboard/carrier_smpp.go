package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/carriers/smpp"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// SMPPConfig is the SMPP adapter's part of the configuration.
type SMPPConfig struct {
	// Addr is the SMSC's host:port (SWITCHBOARD_SMPP_ADDR).
	Addr string
	// SystemID is the bind's system_id (SWITCHBOARD_SMPP_SYSTEM_ID).
	SystemID string
	// Password is the bind's password (SWITCHBOARD_SMPP_PASSWORD). It is read from the
	// environment only, never a flag, so that it shows neither in the process list nor in -h
	// output, and it is never logged.
	Password string
	// Window is how many submit_sm may await their response (SWITCHBOARD_SMPP_WINDOW). Defaults to 10.
	Window int
	// Throughput caps submit_sm per second, 0 for no cap (SWITCHBOARD_SMPP_THROUGHPUT). Defaults to 0.
	Throughput float64

	window, throughput string
}

// bindSMPP registers the SMPP flags on fs and reads the password from the environment.
func bindSMPP(fs *flag.FlagSet, s *SMPPConfig) {
	fs.StringVar(&s.Addr, "smpp-addr", env("SMPP_ADDR", ""), "the SMSC's host:port (SWITCHBOARD_SMPP_ADDR)")
	fs.StringVar(&s.SystemID, "smpp-system-id", env("SMPP_SYSTEM_ID", ""), "SMPP bind system_id (SWITCHBOARD_SMPP_SYSTEM_ID)")
	fs.StringVar(&s.window, "smpp-window", env("SMPP_WINDOW", "10"), "submit_sm awaiting a response at once, 1 to 255 (SWITCHBOARD_SMPP_WINDOW)")
	fs.StringVar(&s.throughput, "smpp-throughput", env("SMPP_THROUGHPUT", "0"), "submit_sm per second; 0 is no cap (SWITCHBOARD_SMPP_THROUGHPUT)")
	s.Password = os.Getenv("SWITCHBOARD_SMPP_PASSWORD")
}

// Validate finishes the SMPP settings and names the one that is missing or malformed (never
// showing the password).
func (s *SMPPConfig) Validate() error {
	if s.Addr == "" {
		return errors.New("SWITCHBOARD_SMPP_ADDR / --smpp-addr: the SMSC's host:port is required with SWITCHBOARD_CARRIER=smpp")
	}
	if _, port, err := net.SplitHostPort(s.Addr); err != nil || port == "" {
		return fmt.Errorf("SWITCHBOARD_SMPP_ADDR / --smpp-addr: %q is not host:port", s.Addr)
	}
	if s.SystemID == "" {
		return errors.New("SWITCHBOARD_SMPP_SYSTEM_ID / --smpp-system-id: the bind's system_id is required with SWITCHBOARD_CARRIER=smpp")
	}
	if len(s.SystemID) > 15 {
		return errors.New("SWITCHBOARD_SMPP_SYSTEM_ID / --smpp-system-id: SMPP allows at most 15 characters")
	}
	if len(s.Password) > 8 {
		return errors.New("SWITCHBOARD_SMPP_PASSWORD: SMPP allows at most 8 characters")
	}
	w, err := strconv.Atoi(s.window)
	if err != nil || w < 1 || w > 255 {
		return fmt.Errorf("SWITCHBOARD_SMPP_WINDOW / --smpp-window: %q is not an integer from 1 to 255", s.window)
	}
	s.Window = w
	if s.Throughput, err = strconv.ParseFloat(s.throughput, 64); err != nil || s.Throughput < 0 {
		return fmt.Errorf("SWITCHBOARD_SMPP_THROUGHPUT / --smpp-throughput: %q is not a non-negative number", s.throughput)
	}
	return nil
}

// smppCarriers builds the adapters of SWITCHBOARD_CARRIER=smpp: SMPP, the default, then the
// simulated carrier, so that numbers the installation took while it ran on the simulator
// (phone_numbers.carrier = sim) keep working after the switch. The SMPP adapter binds only once
// serve starts it (startCarriers), so operator commands never bind.
func smppCarriers(cfg *Config, st *store.Store, r carriers.Reporter, log *slog.Logger) ([]carriers.Carrier, error) {
	c, err := smpp.New(smpp.Config{Addr: cfg.SMPP.Addr, SystemID: cfg.SMPP.SystemID, Password: cfg.SMPP.Password,
		Window: cfg.SMPP.Window, Throughput: cfg.SMPP.Throughput, Store: st.SMPP(), Reporter: r, Logger: log})
	if err != nil {
		return nil, err
	}
	s, err := sim.New(sim.Config{Store: st.Sim(), Reporter: r, ReviewDelay: cfg.SimReviewDelay, Latency: simLatency(cfg), Logger: log})
	if err != nil {
		return nil, err
	}
	return []carriers.Carrier{c, s}, nil
}

// startCarriers starts the adapters that hold a connection of their own (the SMPP bind) and
// returns what stops them; serve calls it after its job workers have stopped.
func startCarriers(core *service.Core) (stop func()) {
	a, err := core.Carriers.Get(smpp.Name)
	c, ok := a.(*smpp.Carrier)
	if err != nil || !ok {
		return func() {}
	}
	c.Start()
	return func() { _ = c.Close() }
}
