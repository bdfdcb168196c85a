// Package twilio is the Twilio carrier adapter: it sends SMS and MMS through Twilio's
// Programmable Messaging REST API, searches, buys and releases numbers through
// AvailablePhoneNumbers and IncomingPhoneNumbers, and turns the callbacks Twilio posts to
// {PublicURL}/carriers/twilio/… (delivery statuses, inbound messages, calls and their
// recordings) into reports, after checking their X-Twilio-Signature.
//
// It talks to Twilio with a small client of its own rather than the twilio-go SDK: the adapter
// needs six endpoints, the API base must point at a fake in tests, and the SDK would add a very
// large generated dependency for that. It deliberately does not register 10DLC campaigns or
// verify toll-free numbers (Twilio does that through TrustHub and Messaging Services), so the
// core answers carrier_unsupported for those.
package twilio

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
)

// Name is the adapter's name.
const Name = "twilio"

// DefaultAPIBase is Twilio's REST API.
const DefaultAPIBase = "https://api.twilio.com"

// CallbackPath is where the adapter's callbacks are served, under the installation's public URL.
const CallbackPath = "/carriers/twilio"

// Config configures the Twilio adapter.
type Config struct {
	// AccountSID (AC…) and AuthToken authenticate the REST calls and sign Twilio's callbacks.
	// Required.
	AccountSID, AuthToken string
	// APIBase is the REST API's base URL. Defaults to DefaultAPIBase.
	APIBase string
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
	c.client = &client{base: strings.TrimSuffix(cfg.APIBase, "/"), sid: cfg.AccountSID, token: cfg.AuthToken, http: cfg.HTTPClient}
	return c, nil
}

// accountSID is the pattern of an account sid in Twilio's OpenAPI description
// (twilio_api_v2010.json, AccountSid: ^AC[0-9a-fA-F]{32}$); Twilio refuses any other on every call.
var accountSID = regexp.MustCompile(`^AC[0-9a-fA-F]{32}$`)

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
	for _, u := range []struct{ name, value string }{{"API base", cfg.APIBase}, {"public URL", cfg.PublicURL}} {
		if u.value == "" && u.name == "API base" {
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

// Register adds the adapter's job workers (the retry of reports the core refused).
func (c *Carrier) Register(w *river.Workers) {
	river.AddWorker(w, &reportWorker{c: c})
}

// callbackURL is the public URL of one of the adapter's callbacks.
func (c *Carrier) callbackURL(path string) string { return c.public + CallbackPath + path }
