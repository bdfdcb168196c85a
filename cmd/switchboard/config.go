package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/service"
)

// Config is the installation's configuration, read from flags and SWITCHBOARD_* variables (a
// flag wins over its variable). cmd/ is the only package that reads either.
type Config struct {
	// DataDir holds the SQLite database and the generated TLS pair. Defaults to ./data.
	DataDir string
	// DatabaseURL selects the database: postgres://… for PostgreSQL, otherwise a SQLite path.
	// Defaults to DataDir/switchboard.db.
	DatabaseURL string
	// Listen is the TLS listener's address. Defaults to 127.0.0.1:8443.
	Listen string
	// PlainListen is an optional plain-HTTP listener that refuses requests with https_required
	// unless they come from a trusted proxy. Defaults to none.
	PlainListen string
	// TrustedProxies are comma-separated CIDRs of TLS-terminating proxies. Defaults to none.
	TrustedProxies []netip.Prefix
	// TLSCert and TLSKey are PEM files. Defaults to a self-signed pair in DataDir/tls.
	TLSCert, TLSKey string
	// PublicURL is the base URL clients and handsets reach; the `iss` of user tokens.
	// Defaults to https://<Listen>.
	PublicURL string
	// LogLevel is debug, info, warn or error. Defaults to info.
	LogLevel slog.Level
	// AutoMigrate applies pending migrations when serve starts. Defaults to true.
	AutoMigrate bool
	// RateLimit and RateBurst are the per-key token bucket. Default 100/s and 200.
	RateLimit float64
	RateBurst int
	// Carrier is the default carrier adapter: sim, twilio or smpp. Defaults to sim.
	Carrier string
	// SimReviewDelay is how long the simulated carrier takes to review a campaign. Defaults to 2s.
	SimReviewDelay time.Duration
	// SimLatency is how long after a submission the simulated carrier's receipt arrives.
	// Defaults to 500ms.
	SimLatency time.Duration
	// Pacing is each sender number's messages per second by type; 0 means unpaced. Defaults to
	// local 10, toll-free 3, short code 100, demo 1.
	Pacing service.Pacing
	// JobRescueAfter is how long a job may run before it is taken over (its instance presumably
	// died). Defaults to 5m.
	JobRescueAfter time.Duration
	// WebhookAllowPrivate lets webhook endpoints resolve to private, loopback and link-local
	// addresses. Defaults to false (`make run` sets it for local development).
	WebhookAllowPrivate bool
	// VerificationSender is the number verification codes are sent from, normalised to E.164. It
	// must be a number the installation holds; that is checked when a verification is created,
	// not here. Defaults to empty: the shared demo number.
	VerificationSender string
	// Twilio configures the Twilio adapter (see carrier_twilio.go); required when Carrier is twilio.
	Twilio TwilioConfig
	// SMPP configures the SMPP adapter (see carrier_smpp.go); required when Carrier is smpp.
	SMPP SMPPConfig
}

func env(name, def string) string {
	if v, ok := os.LookupEnv("SWITCHBOARD_" + name); ok {
		return v
	}
	return def
}

// bindConfig registers the configuration flags on fs with their environment defaults; the
// returned function finishes and validates the Config after fs.Parse.
func bindConfig(fs *flag.FlagSet) (*Config, func() error) {
	c := &Config{}
	var level, proxies, autoMigrate, rateLimit, rateBurst string
	fs.StringVar(&c.DataDir, "data-dir", env("DATA_DIR", "./data"), "data directory (SWITCHBOARD_DATA_DIR)")
	fs.StringVar(&c.DatabaseURL, "database-url", env("DATABASE_URL", ""), "postgres:// URL or SQLite path (SWITCHBOARD_DATABASE_URL); default: <data-dir>/switchboard.db")
	fs.StringVar(&c.Listen, "listen", env("LISTEN", "127.0.0.1:8443"), "TLS listen address (SWITCHBOARD_LISTEN)")
	fs.StringVar(&c.PlainListen, "plain-listen", env("PLAIN_LISTEN", ""), "optional plain-HTTP listen address (SWITCHBOARD_PLAIN_LISTEN)")
	fs.StringVar(&proxies, "trusted-proxies", env("TRUSTED_PROXIES", ""), "comma-separated CIDRs of TLS-terminating proxies (SWITCHBOARD_TRUSTED_PROXIES)")
	fs.StringVar(&c.TLSCert, "tls-cert", env("TLS_CERT", ""), "PEM certificate (SWITCHBOARD_TLS_CERT); default: self-signed in <data-dir>/tls")
	fs.StringVar(&c.TLSKey, "tls-key", env("TLS_KEY", ""), "PEM private key (SWITCHBOARD_TLS_KEY)")
	fs.StringVar(&c.PublicURL, "public-url", env("PUBLIC_URL", ""), "public base URL (SWITCHBOARD_PUBLIC_URL); default: https://<listen>")
	fs.StringVar(&level, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (SWITCHBOARD_LOG_LEVEL)")
	fs.StringVar(&autoMigrate, "auto-migrate", env("AUTO_MIGRATE", "true"), "apply pending migrations on start (SWITCHBOARD_AUTO_MIGRATE)")
	fs.StringVar(&rateLimit, "rate-limit", env("RATE_LIMIT", "100"), "requests per second per API key; 0 disables (SWITCHBOARD_RATE_LIMIT)")
	fs.StringVar(&rateBurst, "rate-burst", env("RATE_BURST", "200"), "burst per API key (SWITCHBOARD_RATE_BURST)")
	fs.StringVar(&c.Carrier, "carrier", env("CARRIER", "sim"), "default carrier adapter: sim, twilio or smpp (SWITCHBOARD_CARRIER)")
	bindTwilio(fs, &c.Twilio)
	bindSMPP(fs, &c.SMPP)
	var reviewDelay string
	fs.StringVar(&reviewDelay, "sim-review-delay", env("SIM_REVIEW_DELAY", "2s"), "simulated campaign review time (SWITCHBOARD_SIM_REVIEW_DELAY)")
	var simLatency, rescueAfter, webhookPrivate, verificationSender string
	fs.StringVar(&webhookPrivate, "webhook-allow-private", env("WEBHOOK_ALLOW_PRIVATE", "false"), "deliver webhooks to private, loopback and link-local addresses (SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE)")
	fs.StringVar(&verificationSender, "verification-sender", env("VERIFICATION_SENDER", ""), "E.164 number, held by this installation, that verification codes are sent from (SWITCHBOARD_VERIFICATION_SENDER); default: the shared demo number")
	fs.StringVar(&simLatency, "sim-latency", env("SIM_LATENCY", "500ms"), "simulated delivery receipt latency (SWITCHBOARD_SIM_LATENCY)")
	fs.StringVar(&rescueAfter, "job-rescue-after", env("JOB_RESCUE_AFTER", "5m"), "how long a job may run before another instance takes it over (SWITCHBOARD_JOB_RESCUE_AFTER)")
	paceFlags := []struct {
		flag, env, def string
		dst            *float64
	}{
		{"pace-local", "PACE_LOCAL", "10", &c.Pacing.Local},
		{"pace-toll-free", "PACE_TOLL_FREE", "3", &c.Pacing.TollFree},
		{"pace-short-code", "PACE_SHORT_CODE", "100", &c.Pacing.ShortCode},
		{"pace-demo", "PACE_DEMO", "1", &c.Pacing.Demo},
	}
	paceValues := make([]string, len(paceFlags))
	for i, p := range paceFlags {
		fs.StringVar(&paceValues[i], p.flag, env(p.env, p.def), "messages per second per sender number; 0 is unpaced (SWITCHBOARD_"+p.env+")")
	}
	return c, func() error {
		for i, p := range paceFlags {
			v, err := strconv.ParseFloat(paceValues[i], 64)
			if err != nil || v < 0 {
				return fmt.Errorf("SWITCHBOARD_%s / --%s: %q is not a non-negative number", p.env, p.flag, paceValues[i])
			}
			if v == 0 {
				v = -1 // unpaced, in service.Pacing's terms
			}
			*p.dst = v
		}
		if d, err := time.ParseDuration(simLatency); err != nil || d < 0 {
			return fmt.Errorf("SWITCHBOARD_SIM_LATENCY / --sim-latency: %q is not a non-negative duration", simLatency)
		} else {
			c.SimLatency = d
		}
		if d, err := time.ParseDuration(rescueAfter); err != nil || d <= 0 {
			return fmt.Errorf("SWITCHBOARD_JOB_RESCUE_AFTER / --job-rescue-after: %q is not a positive duration", rescueAfter)
		} else {
			c.JobRescueAfter = d
		}
		d, err := time.ParseDuration(reviewDelay)
		if err != nil || d <= 0 {
			return fmt.Errorf("SWITCHBOARD_SIM_REVIEW_DELAY / --sim-review-delay: %q is not a positive duration", reviewDelay)
		}
		c.SimReviewDelay = d
		switch c.Carrier {
		case "sim", "twilio", "smpp":
		default:
			return fmt.Errorf("SWITCHBOARD_CARRIER / --carrier: %q is not sim, twilio or smpp", c.Carrier)
		}
		if c.Carrier == "twilio" {
			if err := c.Twilio.Validate(); err != nil {
				return err
			}
		}
		if c.Carrier == "smpp" {
			if err := c.SMPP.Validate(); err != nil {
				return err
			}
		}
		if c.DatabaseURL == "" {
			c.DatabaseURL = filepath.Join(c.DataDir, "switchboard.db")
		}
		if c.PublicURL == "" {
			c.PublicURL = "https://" + c.Listen
		}
		if err := c.LogLevel.UnmarshalText([]byte(level)); err != nil {
			return fmt.Errorf("SWITCHBOARD_LOG_LEVEL / --log-level: %q is not debug, info, warn or error", level)
		}
		b, err := strconv.ParseBool(autoMigrate)
		if err != nil {
			return fmt.Errorf("SWITCHBOARD_AUTO_MIGRATE / --auto-migrate: %q is not true or false", autoMigrate)
		}
		c.AutoMigrate = b
		if c.WebhookAllowPrivate, err = strconv.ParseBool(webhookPrivate); err != nil {
			return fmt.Errorf("SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE / --webhook-allow-private: %q is not true or false", webhookPrivate)
		}
		if verificationSender != "" {
			if c.VerificationSender, err = service.NormalizeE164(verificationSender); err != nil {
				return fmt.Errorf("SWITCHBOARD_VERIFICATION_SENDER / --verification-sender: %q %w", verificationSender, err)
			}
		}
		if c.RateLimit, err = strconv.ParseFloat(rateLimit, 64); err != nil || c.RateLimit < 0 {
			return fmt.Errorf("SWITCHBOARD_RATE_LIMIT / --rate-limit: %q is not a non-negative number", rateLimit)
		}
		if c.RateBurst, err = strconv.Atoi(rateBurst); err != nil || c.RateBurst < 1 {
			return fmt.Errorf("SWITCHBOARD_RATE_BURST / --rate-burst: %q is not a positive integer", rateBurst)
		}
		for _, p := range strings.Split(proxies, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			prefix, err := netip.ParsePrefix(p)
			if err != nil {
				return fmt.Errorf("SWITCHBOARD_TRUSTED_PROXIES / --trusted-proxies: %q is not a CIDR", p)
			}
			c.TrustedProxies = append(c.TrustedProxies, prefix)
		}
		if (c.TLSCert == "") != (c.TLSKey == "") {
			return errors.New("SWITCHBOARD_TLS_CERT and SWITCHBOARD_TLS_KEY must be set together")
		}
		return nil
	}
}
