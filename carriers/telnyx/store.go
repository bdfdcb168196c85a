package telnyx

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// Store keeps what the adapter must remember (the telnyx_* tables of the installation's
// database); store.TelnyxStore implements it.
type Store interface {
	// SubmissionID returns the id of the message Telnyx accepted under reference, "" when none:
	// Telnyx's messages have no client reference, so the adapter records its own.
	SubmissionID(ctx context.Context, reference string) (string, error)
	// AddSubmission records the id of a message Telnyx accepted under reference; a reference
	// recorded already keeps its first id.
	AddSubmission(ctx context.Context, reference, id string, at time.Time) error
	// ReferenceOf returns the reference a message id was recorded under, "" when none.
	ReferenceOf(ctx context.Context, id string) (string, error)
	// InsertJob enqueues one of the adapter's jobs (a report to make again, a poll).
	InsertJob(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
	// BrandID returns the 10DLC brand registered for an account, "" when none.
	BrandID(ctx context.Context, accountID string) (string, error)
	// SetBrandID records the 10DLC brand registered for an account.
	SetBrandID(ctx context.Context, accountID, brandID string) error
	// Registration returns a campaign or toll-free verification by our reference, nil when none.
	Registration(ctx context.Context, reference string) (*Registration, error)
	// SaveRegistration records a registration as it now is.
	SaveRegistration(ctx context.Context, r *Registration) error
}

// Registration kinds.
const (
	KindCampaign = "campaign"
	KindTollFree = "toll_free"
)

// Registration is a 10DLC campaign or a toll-free verification request at Telnyx.
type Registration struct {
	Reference string `json:"reference"`
	AccountID string `json:"account_id"`
	Kind      string `json:"kind"`
	// ID is Telnyx's id of it (a campaignId or a verification request id), once made.
	ID string `json:"id,omitempty"`
	// Status is Telnyx's last known status of it.
	Status string `json:"status,omitempty"`
	// Submission is the submission as last given (JSON of the seam's submission).
	Submission  []byte    `json:"submission"`
	SubmittedAt time.Time `json:"submitted_at"`
	// Open is true until the verdict is reported or the registration withdrawn.
	Open bool `json:"open"`
}
