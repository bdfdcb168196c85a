package twilio

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riverqueue/river"
)

// Store keeps what the adapter must remember (the twilio_* tables of the installation's
// database); store.TwilioStore implements it.
type Store interface {
	// SubmissionSID returns the sid of the message Twilio accepted under reference, "" when none:
	// Twilio's Messages API has no client reference, so the adapter records its own.
	SubmissionSID(ctx context.Context, reference string) (string, error)
	// AddSubmission records the sid of a message Twilio accepted under reference; a reference
	// recorded already keeps its first sid.
	AddSubmission(ctx context.Context, reference, sid string, at time.Time) error
	// InsertJob enqueues one of the adapter's jobs (a report to make again, a poll).
	InsertJob(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error

	// Brand returns what was registered at Twilio for an account's brand, nil when nothing.
	Brand(ctx context.Context, accountID string) (*BrandState, error)
	// SaveBrand records an account's brand as registered so far.
	SaveBrand(ctx context.Context, b *BrandState) error
	// Registration returns the registration of a campaign or toll-free verification by our
	// reference, nil when none.
	Registration(ctx context.Context, reference string) (*Registration, error)
	// SaveRegistration records a registration as it now is.
	SaveRegistration(ctx context.Context, r *Registration) error
	// OpenRegistrations returns an account's registrations that await a verdict.
	OpenRegistrations(ctx context.Context, accountID string) ([]Registration, error)
	// NumberService returns the Messaging Service (MG…) a number was added to, "" when none.
	NumberService(ctx context.Context, number string) (string, error)
	// SetNumberService records the Messaging Service a number was added to ("" when taken off).
	SetNumberService(ctx context.Context, number, serviceSID string) error
	// AccountOfBundle returns the account whose brand has a TrustHub bundle (customer profile or
	// trust product) sid, "" when none.
	AccountOfBundle(ctx context.Context, bundleSID string) (string, error)
}

// BrandState is an account's brand as registered at Twilio so far: each sid is recorded as soon
// as Twilio made the resource, so that registration continues where it stopped.
type BrandState struct {
	AccountID string `json:"account_id"`
	// The secondary customer profile and what is assigned to it.
	CustomerProfileSID string `json:"customer_profile_sid,omitempty"`
	BusinessInfoSID    string `json:"business_info_sid,omitempty"`
	RepresentativeSID  string `json:"representative_sid,omitempty"`
	AddressSID         string `json:"address_sid,omitempty"`
	AddressDocSID      string `json:"address_doc_sid,omitempty"`
	// Assigned lists the object sids assigned to bundles, as "bundle/object".
	Assigned []string `json:"assigned,omitempty"`
	// ProfileSubmitted and ProductSubmitted say the bundles were submitted for review.
	ProfileSubmitted bool `json:"profile_submitted,omitempty"`
	// The A2P trust product.
	TrustProductSID  string `json:"trust_product_sid,omitempty"`
	A2PInfoSID       string `json:"a2p_info_sid,omitempty"`
	ProductSubmitted bool   `json:"product_submitted,omitempty"`
	// BrandSID is the A2P brand registration (BN…); BrandStatus its last known status.
	BrandSID    string `json:"brand_sid,omitempty"`
	BrandStatus string `json:"brand_status,omitempty"`
}

// Registration kinds.
const (
	KindCampaign = "campaign"
	KindTollFree = "toll_free"
)

// Registration is a campaign (US A2P compliance registration of the account's Messaging Service)
// or toll-free verification, as submitted to Twilio.
type Registration struct {
	Reference string `json:"reference"`
	AccountID string `json:"account_id"`
	Kind      string `json:"kind"`
	// SID is Twilio's id of the registration (QE… or HH…), once made.
	SID string `json:"sid,omitempty"`
	// Status is Twilio's last known status of it.
	Status string `json:"status,omitempty"`
	// Campaign or TollFree is the submission, as last amended.
	Campaign *json.RawMessage `json:"campaign,omitempty"`
	TollFree *json.RawMessage `json:"toll_free,omitempty"`
	// ServiceSID is the campaign's Messaging Service (MG…).
	ServiceSID string `json:"service_sid,omitempty"`
	// Amended says the submission changed since Twilio got it.
	Amended     bool      `json:"amended,omitempty"`
	SubmittedAt time.Time `json:"submitted_at"`
	// Open is true until the verdict is reported or the registration withdrawn.
	Open bool `json:"open"`
	// Verdict is the verdict found, until the core accepted it.
	Verdict *Verdict `json:"verdict,omitempty"`
}

// Verdict is a decision found at Twilio, kept until reported.
type Verdict struct {
	Approved bool   `json:"approved"`
	Reason   string `json:"reason,omitempty"`
}
