package main

import (
	"errors"
	"log/slog"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/telnyx"
	"github.com/switchboard/switchboard/store"
)

// TelnyxConfig is the Telnyx adapter's part of the configuration.
type TelnyxConfig struct {
	// APIKey authenticates the API calls (SWITCHBOARD_TELNYX_API_KEY, its _FILE variant or the
	// configuration file). It is never a flag, and never logged.
	APIKey string
	// PublicKey is the account's Ed25519 public key, base64, that verifies Telnyx's webhooks
	// (SWITCHBOARD_TELNYX_PUBLIC_KEY).
	PublicKey string
	// MessagingProfileID is the messaging profile messages are sent with and numbers ordered into
	// (SWITCHBOARD_TELNYX_MESSAGING_PROFILE_ID).
	MessagingProfileID string
	// APIBase is Telnyx's API (SWITCHBOARD_TELNYX_API_BASE). Defaults to https://api.telnyx.com.
	APIBase string
}

// Validate names the Telnyx setting that is missing or malformed (never showing the key).
func (t TelnyxConfig) Validate() error {
	// Each setting is checked alone, the others standing in with valid values.
	const key, profile, public = "KEY", "profile", "https://public.invalid"
	const pub = "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="
	checks := []struct {
		setting string
		cfg     telnyx.Config
	}{
		{"SWITCHBOARD_TELNYX_API_KEY", telnyx.Config{APIKey: t.APIKey, PublicKey: pub, MessagingProfileID: profile, PublicURL: public}},
		{"SWITCHBOARD_TELNYX_PUBLIC_KEY / --telnyx-public-key", telnyx.Config{APIKey: key, PublicKey: t.PublicKey, MessagingProfileID: profile, PublicURL: public}},
		{"SWITCHBOARD_TELNYX_MESSAGING_PROFILE_ID / --telnyx-messaging-profile-id", telnyx.Config{APIKey: key, PublicKey: pub, MessagingProfileID: t.MessagingProfileID, PublicURL: public}},
		{"SWITCHBOARD_TELNYX_API_BASE / --telnyx-api-base", telnyx.Config{APIKey: key, PublicKey: pub, MessagingProfileID: profile, APIBase: t.APIBase, PublicURL: public}},
	}
	for _, c := range checks {
		if err := c.cfg.Validate(); err != nil {
			return errors.New(c.setting + ": " + err.Error())
		}
	}
	return nil
}

// telnyxCarrier builds the Telnyx adapter.
func telnyxCarrier(cfg *Config, st *store.Store, r carriers.Reporter, log *slog.Logger) (carriers.Carrier, error) {
	return telnyx.New(telnyx.Config{APIKey: cfg.Telnyx.APIKey, PublicKey: cfg.Telnyx.PublicKey,
		MessagingProfileID: cfg.Telnyx.MessagingProfileID, APIBase: cfg.Telnyx.APIBase, PublicURL: cfg.PublicURL,
		Store: st.Telnyx(), Reporter: r, Logger: log})
}
