package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/carriers/telnyx"
	"github.com/switchboard/switchboard/carriers/twilio"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// Config is the installation's configuration, read from flags, SWITCHBOARD_* variables (or
// their _FILE variants) and an optional configuration file, in that order of precedence. cmd/ is
// the only package that reads any of them; the table of settings is newSettings.
type Config struct {
	// DataDir holds the SQLite database and the generated TLS pair. Defaults to ./data.
	DataDir string
	// DatabaseURL selects the database: postgres:// (or postgresql://) for PostgreSQL, sqlite:PATH
	// or a plain path for SQLite; anything else is refused. Defaults to DataDir/switchboard.db.
	DatabaseURL string
	// DatabaseWait is how long serve waits for a database that does not answer at start,
	// retrying with backoff. Defaults to 60s; 0 fails at once.
	DatabaseWait time.Duration
	// Listen is the TLS listener's address. Defaults to 127.0.0.1:8443.
	Listen string
	// MetricsListen is the Prometheus metrics listener's address (plain HTTP, GET /metrics).
	// Defaults to none: metrics are never served on the API's port.
	MetricsListen string
	// Pprof also serves Go's runtime profiles (net/http/pprof, /debug/pprof/) on the metrics
	// listener, for profiling an instance. Defaults to false.
	Pprof bool
	// PlainListen is an optional plain-HTTP listener that refuses requests with https_required
	// unless they come from a trusted proxy. Defaults to none.
	PlainListen string
	// TrustedProxies are the networks of TLS-terminating proxies. Defaults to none.
	TrustedProxies []netip.Prefix
	// TLSCert and TLSKey are PEM files. Defaults to a self-signed pair in DataDir/tls.
	TLSCert, TLSKey string
	// PublicURL is the absolute http(s) base URL clients and handsets reach: the `iss` of user
	// tokens, the base of short links and of carrier callbacks. Defaults to https://<Listen>.
	PublicURL string
	// OTLPEndpoint is the OTLP/HTTP collector spans are sent to (http(s)://host:4318). Defaults
	// to none: tracing is off.
	OTLPEndpoint string
	// LogLevel is debug, info, warn or error. Defaults to info.
	LogLevel slog.Level
	// AutoMigrate applies pending migrations when serve starts. Defaults to true.
	AutoMigrate bool
	// RateLimit and RateBurst are the per-key token bucket. Default 100/s and 200; a RateLimit
	// of 0 disables it.
	RateLimit float64
	RateBurst int
	// Carrier lists the carrier adapters to run, comma-separated (sim, twilio, telnyx, smpp), the
	// first providing new numbers and campaigns unless a request names another; the simulated
	// carrier always runs beside them. Defaults to sim.
	Carrier string
	// Carriers is Carrier as a list.
	Carriers []string
	// SimReviewDelay is how long the simulated carrier takes to review a campaign. Defaults to 2s.
	SimReviewDelay time.Duration
	// SimLatency is how long after a submission the simulated carrier's receipt arrives.
	// Defaults to 500ms.
	SimLatency time.Duration
	// Pacing is each sender number's messages per second by type, in service.Pacing's terms
	// (negative: unpaced). Defaults to local 10, toll-free 3, short code 100, demo 1.
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
	// Retention is how long API logs, succeeded webhook deliveries and events are kept (0:
	// forever). Defaults to 30, 30 and 90 days.
	Retention store.Retention
	// JobRetention is how long finished jobs are kept. Defaults to 1h.
	JobRetention time.Duration
	// Twilio configures the Twilio adapter (see carrier_twilio.go); required when Carrier is twilio.
	Twilio TwilioConfig
	// Telnyx configures the Telnyx adapter (see carrier_telnyx.go); required when Carrier lists telnyx.
	Telnyx TelnyxConfig
	// SMPP configures the SMPP adapter (see carrier_smpp.go); required when Carrier is smpp.
	SMPP SMPPConfig
	// GCPercent is serve's garbage collection target, as Go's GOGC (which wins when set): the
	// heap grows this many percent over the live data before a collection. Defaults to 800
	// (see runtime.go).
	GCPercent int
	// MemoryLimit is serve's soft memory limit, as Go's GOMEMLIMIT (which wins when set): "auto"
	// (90% of the container's memory limit when there is one), "none", or a size such as 1GiB.
	// Defaults to auto.
	MemoryLimit string

	// the settings' raw forms, finished by Validate.
	logLevel, trustedProxies, verificationSender string
	pacing                                       [4]float64
	// databaseURLGiven records that DatabaseURL came from a source, not from DataDir.
	databaseURLGiven bool
	// memoryLimit is MemoryLimit in bytes: 0 for none, -1 for auto.
	memoryLimit int64
}

// newSettings is the table of every setting, bound to c's fields. README's configuration table
// follows it.
func newSettings(c *Config) settings {
	str := func(p *string) *settingValue { return &settingValue{kind: kindString, dst: p} }
	boolean := func(p *bool) *settingValue { return &settingValue{kind: kindBool, dst: p} }
	integer := func(p *int) *settingValue { return &settingValue{kind: kindInt, dst: p} }
	float := func(p *float64) *settingValue { return &settingValue{kind: kindFloat, dst: p} }
	duration := func(p *time.Duration) *settingValue { return &settingValue{kind: kindDuration, dst: p} }
	return settings{
		{name: "data-dir", def: "./data", scope: scopeGlobal, value: str(&c.DataDir),
			usage: "directory of the SQLite database and the generated TLS pair"},
		{name: "database-url", scope: scopeGlobal, value: str(&c.DatabaseURL),
			usage: "postgres://user:pass@host/db for PostgreSQL, or sqlite:PATH / a file path for SQLite; default: <data-dir>/switchboard.db"},
		{name: "log-level", def: "info", scope: scopeGlobal, value: str(&c.logLevel),
			usage: "debug, info, warn or error (JSON lines on stderr)"},

		{name: "public-url", scope: scopeDomain, value: str(&c.PublicURL),
			usage: "absolute http(s) URL clients and handsets reach: token issuer, short links, carrier callbacks; default: https://<listen>"},
		{name: "webhook-allow-private", def: "false", scope: scopeDomain, value: boolean(&c.WebhookAllowPrivate),
			usage: "deliver webhooks to private, loopback and link-local addresses"},
		{name: "verification-sender", scope: scopeDomain, value: str(&c.verificationSender),
			usage: "E.164 number, held by this installation, that verification codes are sent from; default: the shared demo number"},
		{name: "pace-local", def: "10", scope: scopeDomain, value: float(&c.pacing[0]),
			usage: "messages per second per local sender number; 0 is unpaced"},
		{name: "pace-toll-free", def: "3", scope: scopeDomain, value: float(&c.pacing[1]),
			usage: "messages per second per toll-free sender number; 0 is unpaced"},
		{name: "pace-short-code", def: "100", scope: scopeDomain, value: float(&c.pacing[2]),
			usage: "messages per second per short code; 0 is unpaced"},
		{name: "pace-demo", def: "1", scope: scopeDomain, value: float(&c.pacing[3]),
			usage: "messages per second from the shared demo number; 0 is unpaced"},
		{name: "sim-review-delay", def: "2s", scope: scopeDomain, value: duration(&c.SimReviewDelay),
			usage: "how long the simulated carrier takes to review a campaign"},
		{name: "sim-latency", def: "500ms", scope: scopeDomain, value: duration(&c.SimLatency),
			usage: "how long after a submission the simulated carrier's receipt arrives"},
		{name: "job-rescue-after", def: "5m", scope: scopeDomain, value: duration(&c.JobRescueAfter),
			usage: "how long a job may run before another instance takes it over"},

		{name: "listen", def: "127.0.0.1:8443", scope: scopeServe, value: str(&c.Listen),
			usage: "TLS listener's host:port"},
		{name: "pprof", def: "false", scope: scopeServe, value: boolean(&c.Pprof),
			usage: "also serve Go's runtime profiles (/debug/pprof/) on the metrics listener"},
		{name: "plain-listen", scope: scopeServe, value: str(&c.PlainListen),
			usage: "optional plain-HTTP listener's host:port (answers 403 https_required except to trusted proxies)"},
		{name: "metrics-listen", scope: scopeServe, value: str(&c.MetricsListen),
			usage: "host:port of the Prometheus metrics listener (plain HTTP, GET /metrics), e.g. 127.0.0.1:9090; default: none"},
		{name: "otlp-endpoint", scope: scopeServe, value: str(&c.OTLPEndpoint),
			usage: "OTLP/HTTP collector to send trace spans to, e.g. http://otel-collector:4318; default: none (tracing off)"},
		{name: "trusted-proxies", scope: scopeServe, value: str(&c.trustedProxies),
			usage: "comma-separated CIDRs of TLS-terminating proxies"},
		{name: "tls-cert", scope: scopeServe, value: str(&c.TLSCert),
			usage: "PEM certificate file; default: a self-signed pair in <data-dir>/tls"},
		{name: "tls-key", scope: scopeServe, value: str(&c.TLSKey),
			usage: "PEM private key file, with --tls-cert"},
		{name: "database-wait", def: "60s", scope: scopeServe, value: duration(&c.DatabaseWait),
			usage: "how long to wait, retrying with backoff, for a database that does not answer at start; 0 fails at once"},
		{name: "auto-migrate", def: "true", scope: scopeServe, value: boolean(&c.AutoMigrate),
			usage: "apply pending migrations on start"},
		{name: "rate-limit", def: "100", scope: scopeServe, value: float(&c.RateLimit),
			usage: "requests per second per API key; 0 disables"},
		{name: "rate-burst", def: "200", scope: scopeServe, value: integer(&c.RateBurst),
			usage: "burst per API key"},
		{name: "retention-api-logs", def: "30d", scope: scopeServe, value: duration(&c.Retention.APILogs),
			usage: "how long API request logs are kept; 0 keeps them forever"},
		{name: "retention-webhook-deliveries", def: "30d", scope: scopeServe, value: duration(&c.Retention.WebhookDeliveries),
			usage: "how long succeeded webhook deliveries are kept (failed ones stay, replayable, as long as their event); 0 keeps them forever"},
		{name: "retention-events", def: "90d", scope: scopeServe, value: duration(&c.Retention.Events),
			usage: "how long events are kept, with their deliveries; 0 keeps them forever"},
		{name: "retention-jobs", def: "1h", scope: scopeServe, value: duration(&c.JobRetention),
			usage: "how long completed and cancelled jobs are kept (failed ones a week)"},
		{name: "carrier", def: "sim", scope: scopeServe, value: str(&c.Carrier),
			usage: "carrier adapters, comma-separated (sim, twilio, telnyx, smpp); the first provides new numbers and campaigns"},
		{name: "telnyx-api-key", scope: scopeServe, secret: true, value: str(&c.Telnyx.APIKey),
			usage: "Telnyx API key"},
		{name: "telnyx-public-key", scope: scopeServe, value: str(&c.Telnyx.PublicKey),
			usage: "Telnyx account's public key (base64 Ed25519) that verifies its webhooks"},
		{name: "telnyx-messaging-profile-id", scope: scopeServe, value: str(&c.Telnyx.MessagingProfileID),
			usage: "Telnyx messaging profile that messages are sent with and numbers ordered into"},
		{name: "telnyx-api-base", def: telnyx.DefaultAPIBase, scope: scopeServe, value: str(&c.Telnyx.APIBase),
			usage: "Telnyx API base URL"},
		{name: "twilio-account-sid", scope: scopeServe, value: str(&c.Twilio.AccountSID),
			usage: "Twilio account SID, AC…"},
		{name: "twilio-auth-token", scope: scopeServe, secret: true, value: str(&c.Twilio.AuthToken),
			usage: "Twilio auth token"},
		{name: "twilio-api-base", def: twilio.DefaultAPIBase, scope: scopeServe, value: str(&c.Twilio.APIBase),
			usage: "Twilio REST API base URL"},
		{name: "twilio-messaging-api-base", def: twilio.DefaultMessagingAPIBase, scope: scopeServe, value: str(&c.Twilio.MessagingAPIBase),
			usage: "Twilio Messaging API base URL"},
		{name: "twilio-trusthub-api-base", def: twilio.DefaultTrustHubAPIBase, scope: scopeServe, value: str(&c.Twilio.TrustHubAPIBase),
			usage: "Twilio TrustHub API base URL"},
		{name: "twilio-primary-profile-sid", scope: scopeServe, value: str(&c.Twilio.PrimaryCustomerProfileSID),
			usage: "the operator's approved TrustHub primary customer profile, BU… (assigned to each account's brand)"},
		{name: "twilio-notification-email", scope: scopeServe, value: str(&c.Twilio.NotificationEmail),
			usage: "where Twilio sends notices about registrations; default: each brand's email"},
		{name: "smpp-addr", scope: scopeServe, value: str(&c.SMPP.Addr),
			usage: "the SMSC's host:port"},
		{name: "smpp-system-id", scope: scopeServe, value: str(&c.SMPP.SystemID),
			usage: "SMPP bind system_id"},
		{name: "smpp-password", scope: scopeServe, secret: true, value: str(&c.SMPP.Password),
			usage: "SMPP bind password"},
		{name: "smpp-window", def: "10", scope: scopeServe, value: integer(&c.SMPP.Window),
			usage: "submit_sm awaiting a response at once, 1 to 255"},
		{name: "smpp-throughput", def: "0", scope: scopeServe, value: float(&c.SMPP.Throughput),
			usage: "submit_sm per second; 0 is no cap"},
		{name: "gc-percent", def: strconv.Itoa(defaultGCPercent), scope: scopeServe, value: integer(&c.GCPercent),
			usage: "Go garbage collection target (as GOGC, which wins when set): the heap grows this many percent over live data between collections"},
		{name: "memory-limit", def: "auto", scope: scopeServe, value: str(&c.MemoryLimit),
			usage: "Go soft memory limit (as GOMEMLIMIT, which wins when set): auto (90% of the container's limit, if any), none, or a size such as 1GiB"},
	}
}

// validate checks and finishes the settings of the given scopes, naming the setting at fault
// and saying what to do. It touches nothing outside the Config.
func (c *Config) validate(ss settings, scopes ...scope) error {
	has := func(sc scope) bool {
		for _, s := range scopes {
			if s == sc {
				return true
			}
		}
		return false
	}
	if err := c.LogLevel.UnmarshalText([]byte(c.logLevel)); err != nil {
		return errSetting(ss.byName("log-level"), "%q is not debug, info, warn or error", c.logLevel)
	}
	if err := c.validateDatabaseURL(ss.byName("database-url")); err != nil {
		return err
	}
	if has(scopeServe) {
		if err := c.validateServe(ss); err != nil {
			return err
		}
	}
	if has(scopeDomain) {
		if err := c.validateDomain(ss); err != nil {
			return err
		}
	}
	return nil
}

// schemePattern matches a URL scheme at the start of a database setting.
var schemePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// validateDatabaseURL accepts postgres:// and postgresql:// URLs, sqlite:PATH (sqlite://PATH) and
// plain paths, and refuses any other scheme, which would otherwise become a SQLite file name.
func (c *Config) validateDatabaseURL(s *setting) error {
	if c.DatabaseURL == "" {
		c.DatabaseURL = filepath.Join(c.DataDir, "switchboard.db")
		return nil
	}
	c.databaseURLGiven = true
	u := c.DatabaseURL
	switch {
	case strings.HasPrefix(u, "postgres://"), strings.HasPrefix(u, "postgresql://"):
		parsed, err := url.Parse(u)
		if err != nil {
			return errSetting(s, "not a valid URL (%s): write it as postgres://user:password@host:5432/dbname?sslmode=disable", redactParseError(err))
		}
		if parsed.Host == "" && parsed.Query().Get("host") == "" {
			return errSetting(s, "%q has no host: write it as postgres://user:password@host:5432/dbname", parsed.Redacted())
		}
	case strings.HasPrefix(u, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(u, "sqlite:"), "//")
		if path == "" {
			return errSetting(s, "sqlite: needs a file path, e.g. sqlite:/var/lib/switchboard/switchboard.db")
		}
		c.DatabaseURL = path
	case schemePattern.MatchString(u) && !strings.Contains(u, string(filepath.Separator)+":"):
		scheme, _, _ := strings.Cut(u, ":")
		return errSetting(s, "the scheme %q is not supported: use postgres://… for PostgreSQL, or sqlite:PATH or a file path for SQLite", scheme)
	}
	return nil
}

// redactParseError keeps a URL parse error's reason without the URL, which may hold a password.
func redactParseError(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return "malformed"
}

// validateDomain checks the settings of the commands that act through the domain.
func (c *Config) validateDomain(ss settings) error {
	for i, name := range []string{"pace-local", "pace-toll-free", "pace-short-code", "pace-demo"} {
		v := c.pacing[i]
		if v < 0 {
			return errSetting(ss.byName(name), "%v is negative: give messages per second, or 0 for unpaced", v)
		}
		if v == 0 {
			v = -1 // unpaced, in service.Pacing's terms
		}
		*[]*float64{&c.Pacing.Local, &c.Pacing.TollFree, &c.Pacing.ShortCode, &c.Pacing.Demo}[i] = v
	}
	if c.SimLatency < 0 {
		return errSetting(ss.byName("sim-latency"), "%s is negative", c.SimLatency)
	}
	if c.JobRescueAfter <= 0 {
		return errSetting(ss.byName("job-rescue-after"), "%s is not a positive duration", c.JobRescueAfter)
	}
	if c.SimReviewDelay <= 0 {
		return errSetting(ss.byName("sim-review-delay"), "%s is not a positive duration", c.SimReviewDelay)
	}
	if c.verificationSender != "" {
		n, err := service.NormalizeE164(c.verificationSender)
		if err != nil {
			return errSetting(ss.byName("verification-sender"), "%q %v", c.verificationSender, err)
		}
		c.VerificationSender = n
	}
	if c.PublicURL == "" {
		c.PublicURL = "https://" + c.Listen
	} else if err := checkPublicURL(c.PublicURL); err != nil {
		return errSetting(ss.byName("public-url"), "%s", err)
	}
	return nil
}

// checkPublicURL requires an absolute http(s) URL without query or fragment: it is the token
// issuer, the Twilio signature base and the short-link base.
func checkPublicURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL: give the address clients reach, e.g. https://sms.example.com", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q must be a base URL, without credentials, query or fragment", s)
	}
	return nil
}

// validateServe checks the settings that only serve reads.
func (c *Config) validateServe(ss settings) error {
	for _, name := range []string{"listen", "plain-listen", "metrics-listen"} {
		v := ss.byName(name).value.String()
		if v == "" && name != "listen" {
			continue
		}
		if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
			return errSetting(ss.byName(name), "%q is not host:port, e.g. 0.0.0.0:8443 or 127.0.0.1:8443", v)
		}
	}
	for _, name := range []string{"retention-api-logs", "retention-webhook-deliveries", "retention-events", "retention-jobs"} {
		if d := *ss.byName(name).value.dst.(*time.Duration); d < 0 {
			return errSetting(ss.byName(name), "%s is negative: give a duration such as 30d, or 0 to keep forever", d)
		}
	}
	if c.JobRetention == 0 {
		return errSetting(ss.byName("retention-jobs"), "must be positive: completed jobs pile up in the queue's table otherwise")
	}
	if c.OTLPEndpoint != "" {
		if u, err := url.Parse(c.OTLPEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errSetting(ss.byName("otlp-endpoint"), "%q is not an http(s) URL of an OTLP/HTTP collector, e.g. http://otel-collector:4318", c.OTLPEndpoint)
		}
	}
	if c.DatabaseWait < 0 {
		return errSetting(ss.byName("database-wait"), "%s is negative: give 0 to fail at once", c.DatabaseWait)
	}
	if c.RateLimit < 0 {
		return errSetting(ss.byName("rate-limit"), "%v is negative: give requests per second, or 0 to disable", c.RateLimit)
	}
	if c.RateBurst < 1 {
		return errSetting(ss.byName("rate-burst"), "%d is not a positive integer", c.RateBurst)
	}
	if c.GCPercent < 1 {
		return errSetting(ss.byName("gc-percent"), "%d is not a positive integer: give a percentage such as 100 (Go's default) or 400", c.GCPercent)
	}
	limit, err := parseMemoryLimit(c.MemoryLimit)
	if err != nil {
		return errSetting(ss.byName("memory-limit"), "%v", err)
	}
	c.memoryLimit = limit
	c.TrustedProxies = nil
	for _, p := range strings.Split(c.trustedProxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			return errSetting(ss.byName("trusted-proxies"), "%q is not a CIDR such as 10.0.0.0/8", p)
		}
		c.TrustedProxies = append(c.TrustedProxies, prefix)
	}
	if c.TLSCert == "" && c.TLSKey != "" {
		return errSetting(ss.byName("tls-cert"), "is required with --tls-key: set both, or neither for a self-signed pair")
	}
	if c.TLSCert != "" && c.TLSKey == "" {
		return errSetting(ss.byName("tls-key"), "is required with --tls-cert: set both, or neither for a self-signed pair")
	}
	c.Carriers = nil
	for _, name := range strings.Split(c.Carrier, ",") {
		name = strings.TrimSpace(name)
		if slices.Contains(c.Carriers, name) {
			return errSetting(ss.byName("carrier"), "lists %s twice", name)
		}
		c.Carriers = append(c.Carriers, name)
		var err error
		switch name {
		case "sim":
		case "twilio":
			err = c.Twilio.Validate()
		case "telnyx":
			err = c.Telnyx.Validate()
		case "smpp":
			err = c.SMPP.Validate()
		default:
			return errSetting(ss.byName("carrier"), "%q is not sim, twilio, telnyx or smpp (or a comma-separated list of them)", name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
