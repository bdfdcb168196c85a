package sim

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// Store keeps the simulated carrier's world: the numbers it provisioned, the campaign reviews it
// was asked for and its outbox (the sim_* tables of the installation's database, so that
// `switchboard sim …` in another process sees the same world). store.SimStore implements it.
// Where a method takes a job, the job is inserted in the transaction of the change, so that the
// change and what follows from it commit together.
type Store interface {
	// ProvisionedAmong returns those of numbers that the simulator has provisioned.
	ProvisionedAmong(ctx context.Context, numbers []string) ([]string, error)
	// Provision records number as provisioned; false when it was already.
	Provision(ctx context.Context, number string, at time.Time) (bool, error)
	// Unprovision forgets a provisioned number; a number that is not provisioned is no error.
	Unprovision(ctx context.Context, number string) error

	// SubmitReview records a submission for review, with job (the review to come). A reference
	// recorded already is amended instead: a review still pending judges the amendment (and job is
	// not inserted), a decided one is reopened with job.
	SubmitReview(ctx context.Context, r Review, job river.JobArgs, opts *river.InsertOpts) error
	// DecideReview marks the review of reference decided at at, and returns it with true. A review
	// decided already is returned with false; one that does not exist (withdrawn) is nil.
	DecideReview(ctx context.Context, reference string, at time.Time) (*Review, bool, error)
	// ReopenReview undoes the decision made at at, unless the review changed since.
	ReopenReview(ctx context.Context, reference string, at time.Time) error
	// Review returns the review of reference, nil when there is none.
	Review(ctx context.Context, reference string) (*Review, error)
	// WithdrawReview forgets the review of reference, so that it is never decided; one that does
	// not exist is no error.
	WithdrawReview(ctx context.Context, reference string) error

	// AddToOutbox puts entries into the outbox, except those whose reference is there already, in
	// one transaction that need not wait for the disk (a submission lost with the database is
	// submitted again). Within it, then gets the carrier id stored first under each reference and
	// returns the receipts the entries owe and when they are due (none: nothing is kept), which
	// are kept in the same transaction (see ClaimReceipts); AddToOutbox returns their id (0 for
	// none).
	AddToOutbox(ctx context.Context, entries []*OutboxEntry, then func(first map[string]string) ([]OwedReceipt, time.Time)) (int64, error)
	// ForgetReceipts deletes receipts kept by AddToOutbox: they were reported. Ids that are gone
	// are no error.
	ForgetReceipts(ctx context.Context, ids []int64) error
	// ClaimReceipts returns up to limit batches of kept receipts that were due at now, oldest
	// due first, and makes each due again at until, so that no other claim takes them meanwhile;
	// on PostgreSQL, concurrent claims (of this or another instance) skip each other's rows.
	ClaimReceipts(ctx context.Context, now, until time.Time, limit int) ([]OwedReceipts, error)
	// Outbox lists the outbox oldest first, only the messages to one number when to is not empty.
	Outbox(ctx context.Context, to string) ([]OutboxEntry, error)
}

// Review is a submission the simulated registry has received.
type Review struct {
	// Reference is the campaign's id (cpn_… or tfc_…).
	Reference   string
	Description string
	// TCRID is the TCR id of an imported campaign.
	TCRID       string
	SubmittedAt time.Time
	// DecidedAt is set once the verdict has been reported.
	DecidedAt *time.Time
}

// OwedReceipt is the receipt a message accepted into the outbox owes: its fate.
type OwedReceipt struct {
	Reference string `json:"reference"`
	CarrierID string `json:"carrier_id"`
	// Outcome is delivered or a failure reason.
	Outcome string `json:"outcome"`
}

// OwedReceipts are the receipts of one batch of submissions that AddToOutbox kept.
type OwedReceipts struct {
	ID       int64
	Receipts []OwedReceipt
}
