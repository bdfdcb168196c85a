package twilio

import (
	"context"
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
	// InsertJob enqueues one of the adapter's jobs (a report to make again).
	InsertJob(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}
