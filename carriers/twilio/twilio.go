// Package twilio is the Twilio carrier adapter: it sends SMS and MMS through Twilio's
// Programmable Messaging REST API, searches, buys and releases numbers through
// AvailablePhoneNumbers and IncomingPhoneNumbers, and turns the callbacks Twilio posts to
// {PublicURL}/carriers/twilio/… (delivery statuses, inbound messages, calls and their
// recordings) into reports, after checking their X-Twilio-Signature.
//
// It also registers 10DLC brands and campaigns and verifies toll-free numbers (registry.go),
// through TrustHub, A2P brand registrations, Messaging Services and toll-free verifications.
//
// It talks to Twilio with a small client of its own rather than the twilio-go SDK: the adapter
// needs about 25 operations of form-encoded POSTs and JSON answers, the three API bases must
// point at a fake in tests, and twilio-go (v1.31.0) with just the 2010, Messaging and TrustHub
// packages takes about 50 s to compile cold on a 2-core machine (the whole switchboard binary
// takes 64 s) and adds about 7 MB to a binary.
package twilio

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
)

// Name is the adapter's name.
const Name = "twilio"

// Twilio's REST APIs.
const (
	// DefaultAPIBase is the 2010-04-01 API (messages, numbers, addresses).
	DefaultAPIBase = "https://api.twilio.com"
	// DefaultMessagingAPIBase is Messaging v1 (Messaging Services, A2P brands and campaigns,
	// toll-free verifications).
	DefaultMessagingAPIBase = "https://messaging.twilio.com"
	// DefaultTrustHubAPIBase is TrustHub v1 (customer profiles, trust products).
	DefaultTrustHubAPIBase = "https://trusthub.twilio.com"
)

// CallbackPath is where the adapter's callbacks are served, under the installation's public URL.
const CallbackPath = "/carriers/twilio"

// Config configures the Twilio adapter.
type Config struct {
	// AccountSID (AC…) and AuthToken authenticate the REST calls and sign Twilio's callbacks.
	// Required.
	AccountSID, AuthToken string
	// APIBase, MessagingAPIBase and TrustHubAPIBase are the REST APIs' base URLs. Default to
	// DefaultAPIBase, DefaultMessagingAPIBase and DefaultTrustHubAPIBase.
	APIBase, MessagingAPIBase, TrustHubAPIBase string
	// PrimaryCustomerProfileSID is the operator's own approved TrustHub primary customer profile
	// (BU…), which Twilio wants assigned to every account's secondary profile when the operator
	// registers brands for others (an ISV). Optional.
	PrimaryCustomerProfileSID string
	// NotificationEmail receives Twilio's notices about registrations (TrustHub bundles, toll-free
	// verifications). Defaults to each brand's email, else its contact's.
	NotificationEmail string
	// PollMin and PollMax bound the interval at which registrations under review are polled: it
	// grows with the time a registration has been waiting (a quarter of it). Default 30 s and 1 h.
	PollMin, PollMax time.Duration
	// PublicURL is the installation's public base URL; Twilio posts callbacks to
	// PublicURL+CallbackPath+"/…", and their signatures are checked against those URLs. Required.
	PublicURL string
	// Store records submissions (for idempotency) and holds report retries (store.TwilioStore).
	// Required.
	Store Store
	// Reporter receives receipts, inbound messages and call events. Required.
	Reporter carriers.Reporter
	// HTTPClient calls the REST API. Defaults to a client with a 15 s timeout.
	HTTPClient *http.Client
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default(). The auth token is never logged.
	Logger *slog.Logger
}

// Carrier is the Twilio adapter.
type Carrier struct {
	cfg    Config
	client *client
	// public is PublicURL without its trailing slash.
	public string
	// accounts holds a mutex per account whose registration is being worked on.
	accounts sync.Map
}

// New returns the Twilio adapter.
func New(cfg Config) (*Carrier, error) {
	if cfg.Store == nil || cfg.Reporter == nil {
		return nil, errors.New("twilio: Config needs Store and Reporter")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.APIBase == "" {
		cfg.APIBase = DefaultAPIBase
	}
	if cfg.MessagingAPIBase == "" {
		cfg.MessagingAPIBase = DefaultMessagingAPIBase
	}
	if cfg.TrustHubAPIBase == "" {
		cfg.TrustHubAPIBase = DefaultTrustHubAPIBase
	}
	if cfg.PollMin <= 0 {
		cfg.PollMin = 30 * time.Second
	}
	if cfg.PollMax < cfg.PollMin {
		cfg.PollMax = max(time.Hour, cfg.PollMin)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Carrier{cfg: cfg, public: strings.TrimSuffix(cfg.PublicURL, "/")}
	c.client = &client{base: strings.TrimSuffix(cfg.APIBase, "/"), messaging: strings.TrimSuffix(cfg.MessagingAPIBase, "/"),
		trusthub: strings.TrimSuffix(cfg.TrustHubAPIBase, "/"), sid: cfg.AccountSID, token: cfg.AuthToken, http: cfg.HTTPClient}
	return c, nil
}

// accountSID is the pattern of an account sid in Twilio's OpenAPI description
// (twilio_api_v2010.json, AccountSid: ^AC[0-9a-fA-F]{32}$); Twilio refuses any other on every call.
var accountSID = regexp.MustCompile(`^AC[0-9a-fA-F]{32}$`)

// bundleSID is the pattern of a TrustHub bundle (customer profile or trust product) sid.
var bundleSID = regexp.MustCompile(`^BU[0-9a-fA-F]{32}$`)

// Validate checks the settings an operator gives (credentials and URLs), naming the wrong one.
func (cfg Config) Validate() error {
	switch {
	case cfg.AccountSID == "":
		return errors.New("twilio: the account SID is required")
	case !accountSID.MatchString(cfg.AccountSID):
		return errors.New("twilio: the account SID must be AC followed by 32 hexadecimal digits")
	case cfg.AuthToken == "":
		return errors.New("twilio: the auth token is required")
	}
	if cfg.PrimaryCustomerProfileSID != "" && !bundleSID.MatchString(cfg.PrimaryCustomerProfileSID) {
		return errors.New("twilio: the primary customer profile SID must be BU followed by 32 hexadecimal digits")
	}
	for _, u := range []struct{ name, value string }{{"API base", cfg.APIBase}, {"messaging API base", cfg.MessagingAPIBase},
		{"TrustHub API base", cfg.TrustHubAPIBase}, {"public URL", cfg.PublicURL}} {
		if u.value == "" && u.name != "public URL" {
			continue
		}
		p, err := url.Parse(u.value)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return errors.New("twilio: the " + u.name + " must be an absolute http(s) URL")
		}
	}
	return nil
}

// Name reports "twilio".
func (c *Carrier) Name() string { return Name }

// Register adds the adapter's job workers (the retry of reports the core refused, the polling of
// registrations).
func (c *Carrier) Register(w *river.Workers) {
	river.AddWorker(w, &reportWorker{c: c})
	river.AddWorker(w, &pollWorker{c: c})
}

// callbackURL is the public URL of one of the adapter's callbacks.
func (c *Carrier) callbackURL(path string) string { return c.public + CallbackPath + path }
