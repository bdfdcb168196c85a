// Package telnyx is the Telnyx carrier adapter: it sends SMS and MMS through Telnyx's Messaging
// API v2 with a messaging profile, turns Telnyx's webhooks (message.finalized receipts,
// message.received inbound messages with their media), verified by their Ed25519 signature, into
// reports, searches, orders and releases numbers, registers 10DLC brands and campaigns (and
// assigns numbers to them) and verifies toll-free numbers.
//
// It deliberately has no voice: Telnyx's Call Control answers calls with commands to its own API
// rather than a document in the webhook's answer, which does not fit the seam's voicemail
// recorder as it is; calls to a Telnyx number are not recorded.
package telnyx

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
)

// Name is the adapter's name.
const Name = "telnyx"

// DefaultAPIBase is Telnyx's API.
const DefaultAPIBase = "https://api.telnyx.com"

// CallbackPath is where Telnyx's webhooks are served, under the installation's public URL.
const CallbackPath = "/carriers/telnyx"

// Config configures the Telnyx adapter.
type Config struct {
	// APIKey authenticates the API calls (Bearer). Required.
	APIKey string
	// PublicKey is the account's Ed25519 public key (base64) that verifies webhooks. Required.
	PublicKey string
	// MessagingProfileID is the messaging profile messages are sent with and numbers ordered
	// into. Required.
	MessagingProfileID string
	// APIBase is the API's base URL. Defaults to DefaultAPIBase.
	APIBase string
	// PublicURL is the installation's public base URL; Telnyx posts webhooks to
	// PublicURL+CallbackPath+"/webhooks". Required.
	PublicURL string
	// Store keeps submissions and registrations (store.TelnyxStore). Required.
	Store Store
	// Reporter receives receipts, inbound messages and verdicts. Required.
	Reporter carriers.Reporter
	// HTTPClient calls the API. Defaults to a client with a 15 s timeout.
	HTTPClient *http.Client
	// PollMin and PollMax bound the polling of registrations under review (a quarter of the time
	// waited so far). Default 30 s and 1 h.
	PollMin, PollMax time.Duration
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default(). The API key is never logged.
	Logger *slog.Logger
}

// Carrier is the Telnyx adapter.
type Carrier struct {
	cfg       Config
	base      string
	public    string
	publicKey ed25519.PublicKey
	accounts  sync.Map
}

// New returns the Telnyx adapter.
func New(cfg Config) (*Carrier, error) {
	if cfg.Store == nil || cfg.Reporter == nil {
		return nil, errors.New("telnyx: Config needs Store and Reporter")
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
	if cfg.PollMin <= 0 {
		cfg.PollMin = 30 * time.Second
	}
	if cfg.PollMax < cfg.PollMin {
		cfg.PollMax = max(time.Hour, cfg.PollMin)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	key, _ := base64.StdEncoding.DecodeString(cfg.PublicKey)
	return &Carrier{cfg: cfg, base: strings.TrimSuffix(cfg.APIBase, "/"), public: strings.TrimSuffix(cfg.PublicURL, "/"),
		publicKey: ed25519.PublicKey(key)}, nil
}

// Validate checks the settings an operator gives, naming the wrong one.
func (cfg Config) Validate() error {
	switch {
	case cfg.APIKey == "":
		return errors.New("telnyx: the API key is required")
	case cfg.MessagingProfileID == "":
		return errors.New("telnyx: the messaging profile id is required")
	}
	if key, err := base64.StdEncoding.DecodeString(cfg.PublicKey); err != nil || len(key) != ed25519.PublicKeySize {
		return errors.New("telnyx: the public key must be the account's Ed25519 public key in base64 (32 bytes)")
	}
	for _, u := range []struct{ name, value string }{{"API base", cfg.APIBase}, {"public URL", cfg.PublicURL}} {
		if u.value == "" && u.name == "API base" {
			continue
		}
		p, err := url.Parse(u.value)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return errors.New("telnyx: the " + u.name + " must be an absolute http(s) URL")
		}
	}
	return nil
}

// Name reports "telnyx".
func (c *Carrier) Name() string { return Name }

// Register adds the adapter's job workers: reports the core refused, registration polls.
func (c *Carrier) Register(w *river.Workers) {
	river.AddWorker(w, &reportWorker{c: c})
	river.AddWorker(w, &pollWorker{c: c})
}

// webhookURL is where Telnyx posts the adapter's webhooks.
func (c *Carrier) webhookURL() string { return c.public + CallbackPath + "/webhooks" }

// apiError is an error answer of the API: {"errors": [{"code": "10015", "title": "…", "detail": "…"}]}.
type apiError struct {
	Status int
	Errors []struct {
		Code   string `json:"code"`
		Title  string `json:"title"`
		Detail string `json:"detail"`
	} `json:"errors"`
}

func (e *apiError) Error() string {
	var parts []string
	for _, x := range e.Errors {
		parts = append(parts, strings.TrimSpace(x.Code+" "+x.Title+": "+x.Detail))
	}
	return fmt.Sprintf("telnyx: HTTP %d: %s", e.Status, strings.Join(parts, "; "))
}

// code is the first error code of the answer.
func (e *apiError) code() string {
	if len(e.Errors) == 0 {
		return ""
	}
	return e.Errors[0].Code
}

// call sends a JSON request (body nil for none) and decodes a 2xx JSON answer's "data" into out.
func (c *Carrier) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("telnyx: %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("telnyx: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("telnyx: %s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &apiError{Status: resp.StatusCode}
		_ = json.Unmarshal(data, e)
		return e
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return fmt.Errorf("telnyx: %s %s: decode answer: %w", method, path, err)
	}
	if len(env.Data) == 0 {
		env.Data = data // the 10DLC API answers without a data envelope
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("telnyx: %s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// isStatus reports whether err is an API answer with that HTTP status.
func isStatus(err error, status int) bool {
	var e *apiError
	return errors.As(err, &e) && e.Status == status
}
