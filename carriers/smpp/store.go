package smpp

import (
	"context"
	"time"
)

// Store keeps what the adapter must find again after a restart (the smpp_* tables of the
// installation's database): every submission by our reference with the SMSC's message id of each
// of its parts, and the parts of concatenated inbound messages until the last one arrives.
// store.SMPPStore implements it.
type Store interface {
	// BeginSubmission records a submission and its pending parts, unless its reference is recorded
	// already; either way it returns the submission as stored with its parts in order.
	BeginSubmission(ctx context.Context, sub Submission) (*Submission, []Part, error)
	// SetPartID records the SMSC's id of an accepted part. A receipt that overtook the
	// submit_sm_resp has already decided the part's state, which this keeps.
	SetPartID(ctx context.Context, reference string, part int, smscID string) error
	// FindPart returns the part that the SMSC gave one of ids (the forms an SMSC may write one id
	// in), the most recently submitted when ids repeat; nil when none.
	FindPart(ctx context.Context, ids []string) (*Part, error)
	// FinishPart records a part's fate as a receipt told it (PartDelivered, or PartFailed with
	// reason; a part keeps its first fate), and its SMSC id when the receipt overtook the record of
	// it, and returns the submission with all its parts.
	FinishPart(ctx context.Context, reference string, part int, smscID, status, reason string, at time.Time) (*Submission, []Part, error)
	// MarkReported records that the core accepted a submission's final receipt.
	MarkReported(ctx context.Context, reference string, at time.Time) error
	// AddInboundPart keeps one part of a concatenated inbound message (a part received again is
	// kept once) and returns the parts of its message received so far, in order. Parts of
	// messages that never completed are dropped after staleAfter.
	AddInboundPart(ctx context.Context, p InboundPart, staleAfter time.Duration) ([]InboundPart, error)
	// DeleteInbound forgets the parts of a concatenated inbound message once it was reported.
	DeleteInbound(ctx context.Context, source, destination string, concatRef, total int) error

	// AddPoolNumbers adds numbers to the route's inventory; numbers there already are kept as
	// they are.
	AddPoolNumbers(ctx context.Context, ns []PoolNumber) error
	// RemovePoolNumber takes a number out of the inventory, unless an account holds it (false).
	RemovePoolNumber(ctx context.Context, number string) (bool, error)
	// PoolNumbers lists the inventory, held numbers too, by number.
	PoolNumbers(ctx context.Context) ([]PoolNumber, error)
	// FreePoolNumbers lists up to limit numbers of the inventory that nobody holds, of a type and
	// country, starting with prefix (after +1), by number.
	FreePoolNumbers(ctx context.Context, typ, country, prefix string, limit int) ([]PoolNumber, error)
	// TakePoolNumber marks a free number of the inventory held; false when it is held or not there.
	TakePoolNumber(ctx context.Context, number string, at time.Time) (bool, error)
	// ReturnPoolNumber marks a number of the inventory free again.
	ReturnPoolNumber(ctx context.Context, number string) error
}

// PoolNumber is a number of the SMPP route's inventory.
type PoolNumber struct {
	Number string `json:"number"`
	// Type is local or toll_free; Country US or CA.
	Type    string    `json:"type"`
	Country string    `json:"country"`
	AddedAt time.Time `json:"added_at"`
	// TakenAt is set while an account holds the number.
	TakenAt *time.Time `json:"taken_at"`
}

// States of a Part.
const (
	// PartPending has not been accepted by the SMSC (yet).
	PartPending = "pending"
	// PartSubmitted was accepted: its SMSCID is known.
	PartSubmitted = "submitted"
	// PartDelivered and PartFailed are final, as a receipt told them.
	PartDelivered = "delivered"
	PartFailed    = "failed"
)

// Submission is a message submitted over SMPP, in Parts concatenated parts that share ConcatRef
// in their user data header.
type Submission struct {
	Reference string
	ConcatRef int
	Parts     int
	// ReportedAt is set once the core accepted the message's final receipt.
	ReportedAt *time.Time
	CreatedAt  time.Time
}

// Part is one part (1-based) of a submission.
type Part struct {
	Reference string
	Part      int
	// SMSCID is the message id the SMSC gave the part in its submit_sm_resp.
	SMSCID *string
	// Status is one of the Part* states.
	Status        string
	FailureReason *string
	DoneAt        *time.Time
}

// InboundPart is one part of a concatenated inbound message, kept until the last arrives.
type InboundPart struct {
	Source, Destination string
	ConcatRef, Total    int
	Part                int
	Body                string
	CreatedAt           time.Time
}
