package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard/switchboard/carriers"
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
	// Password is the bind's password (SWITCHBOARD_SMPP_PASSWORD, its _FILE variant or the
	// configuration file). It is never a flag, so that it shows neither in the process list nor
	// in -h output, and it is never logged.
	Password string
	// Window is how many submit_sm may await their response (SWITCHBOARD_SMPP_WINDOW). Defaults to 10.
	Window int
	// Throughput caps submit_sm per second, 0 for no cap (SWITCHBOARD_SMPP_THROUGHPUT). Defaults to 0.
	Throughput float64
}

// Validate names the one that is missing or malformed (never
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
	if s.Window < 1 || s.Window > 255 {
		return fmt.Errorf("SWITCHBOARD_SMPP_WINDOW / --smpp-window: %d is not an integer from 1 to 255", s.Window)
	}
	if s.Throughput < 0 {
		return fmt.Errorf("SWITCHBOARD_SMPP_THROUGHPUT / --smpp-throughput: %v is negative: give submit_sm per second, or 0 for no cap", s.Throughput)
	}
	return nil
}

// smppCarrier builds the SMPP adapter. It binds only once serve starts it (startCarriers), so
// operator commands never bind.
func smppCarrier(cfg *Config, st *store.Store, r carriers.Reporter, log *slog.Logger) (carriers.Carrier, error) {
	return smpp.New(smpp.Config{Addr: cfg.SMPP.Addr, SystemID: cfg.SMPP.SystemID, Password: cfg.SMPP.Password,
		Window: cfg.SMPP.Window, Throughput: cfg.SMPP.Throughput, Store: st.SMPP(), Reporter: r, Logger: log})
}

// smppOf is the assembled domain's SMPP adapter, or nil.
func smppOf(core *service.Core) *smpp.Carrier {
	a, err := core.Carriers.Get(smpp.Name)
	if c, ok := a.(*smpp.Carrier); ok && err == nil {
		return c
	}
	return nil
}

// carrierCollectors are the metrics of the adapters that hold a connection: the SMPP bind's
// state and window.
func carrierCollectors(core *service.Core) []prometheus.Collector {
	c := smppOf(core)
	if c == nil {
		return nil
	}
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "switchboard_smpp_bound", Help: "1 while the SMPP bind is up, else 0."},
			func() float64 {
				if c.Bound() {
					return 1
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "switchboard_smpp_window_in_use", Help: "submit_sm awaiting their response."},
			func() float64 { n, _ := c.Window(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "switchboard_smpp_window_size", Help: "submit_sm that may await their response at once (SWITCHBOARD_SMPP_WINDOW)."},
			func() float64 { _, n := c.Window(); return float64(n) }),
	}
}
