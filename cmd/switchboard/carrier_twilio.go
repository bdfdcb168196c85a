package main

import (
	"errors"
	"log/slog"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/twilio"
	"github.com/switchboard/switchboard/store"
)

// TwilioConfig is the Twilio adapter's part of the configuration.
type TwilioConfig struct {
	// AccountSID is the account's AC… sid (SWITCHBOARD_TWILIO_ACCOUNT_SID).
	AccountSID string
	// AuthToken is the account's auth token (SWITCHBOARD_TWILIO_AUTH_TOKEN, its _FILE variant or
	// the configuration file). It is never a flag, so that it shows neither in the process list
	// nor in -h output, and it is never logged.
	AuthToken string
	// APIBase is Twilio's REST API (SWITCHBOARD_TWILIO_API_BASE). Defaults to
	// https://api.twilio.com.
	APIBase string
	// MessagingAPIBase and TrustHubAPIBase are Twilio's Messaging and TrustHub APIs
	// (SWITCHBOARD_TWILIO_MESSAGING_API_BASE, SWITCHBOARD_TWILIO_TRUSTHUB_API_BASE). Default to
	// https://messaging.twilio.com and https://trusthub.twilio.com.
	MessagingAPIBase, TrustHubAPIBase string
	// PrimaryCustomerProfileSID is the operator's approved TrustHub primary customer profile,
	// BU… (SWITCHBOARD_TWILIO_PRIMARY_PROFILE_SID), assigned to each account's brand. Optional.
	PrimaryCustomerProfileSID string
	// NotificationEmail receives Twilio's notices about registrations
	// (SWITCHBOARD_TWILIO_NOTIFICATION_EMAIL). Defaults to each brand's email.
	NotificationEmail string
}

// Validate names the Twilio setting that is missing or malformed (never showing the token).
func (t TwilioConfig) Validate() error {
	// Each setting is checked alone, the others standing in with valid values.
	const sid, token, public = "AC00000000000000000000000000000000", "token", "https://public.invalid"
	checks := []struct {
		setting string
		cfg     twilio.Config
	}{
		{"SWITCHBOARD_TWILIO_ACCOUNT_SID / --twilio-account-sid", twilio.Config{AccountSID: t.AccountSID, AuthToken: token, PublicURL: public}},
		{"SWITCHBOARD_TWILIO_AUTH_TOKEN", twilio.Config{AccountSID: sid, AuthToken: t.AuthToken, PublicURL: public}},
		{"SWITCHBOARD_TWILIO_API_BASE / --twilio-api-base", twilio.Config{AccountSID: sid, AuthToken: token, APIBase: t.APIBase, PublicURL: public}},
		{"SWITCHBOARD_TWILIO_MESSAGING_API_BASE / --twilio-messaging-api-base",
			twilio.Config{AccountSID: sid, AuthToken: token, MessagingAPIBase: t.MessagingAPIBase, PublicURL: public}},
		{"SWITCHBOARD_TWILIO_TRUSTHUB_API_BASE / --twilio-trusthub-api-base",
			twilio.Config{AccountSID: sid, AuthToken: token, TrustHubAPIBase: t.TrustHubAPIBase, PublicURL: public}},
		{"SWITCHBOARD_TWILIO_PRIMARY_PROFILE_SID / --twilio-primary-profile-sid",
			twilio.Config{AccountSID: sid, AuthToken: token, PrimaryCustomerProfileSID: t.PrimaryCustomerProfileSID, PublicURL: public}},
	}
	for _, c := range checks {
		if err := c.cfg.Validate(); err != nil {
			return errors.New(c.setting + ": " + err.Error())
		}
	}
	return nil
}

// twilioCarrier builds the Twilio adapter.
func twilioCarrier(cfg *Config, st *store.Store, r carriers.Reporter, log *slog.Logger) (carriers.Carrier, error) {
	return twilio.New(twilio.Config{AccountSID: cfg.Twilio.AccountSID, AuthToken: cfg.Twilio.AuthToken,
		APIBase: cfg.Twilio.APIBase, MessagingAPIBase: cfg.Twilio.MessagingAPIBase, TrustHubAPIBase: cfg.Twilio.TrustHubAPIBase,
		PrimaryCustomerProfileSID: cfg.Twilio.PrimaryCustomerProfileSID, NotificationEmail: cfg.Twilio.NotificationEmail,
		PublicURL: cfg.PublicURL, Store: st.Twilio(), Reporter: r, Logger: log})
}
