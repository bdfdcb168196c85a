// Package carriertest is the carrier conformance suite: Ginkgo specs of the behaviour that every
// carrier adapter (carriers/sim, and later carriers/twilio, carriers/smpp) must show, capability
// by capability, so that the core can rely on the seam and not on one adapter. An adapter's own
// test suite calls Run with a Harness describing the adapter; specs of capabilities the adapter
// lacks are skipped.
//
// It is not a place for an adapter's particulars (the simulator's number scheme, Twilio's
// callbacks): those stay in the adapter's own specs.
package carriertest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"go.jetify.com/typeid"

	"github.com/switchboard/switchboard/carriers"
)

// Harness describes the adapter under test and how to observe what it reports.
type Harness struct {
	// Carrier is the adapter under test, built with Reports as its Reporter. Required.
	Carrier carriers.Carrier
	// Reports records what the adapter reports. Required.
	Reports *Recorder
	// Timeout bounds the wait for an asynchronous report (a verdict, a receipt), including one
	// retry after the reporter refused it. Defaults to 15 s.
	Timeout time.Duration
	// Inventory names numbers of the adapter's inventory, for the NumberInventory specs.
	Inventory Inventory
	// RejectDescription is a campaign description the adapter's registry rejects; "" skips the
	// rejection specs (a real registry cannot be made to reject on demand).
	RejectDescription string
	// TollFreeNumber is a toll-free number of the adapter's that the toll-free verification specs
	// verify (a carrier verifies only its own numbers). Defaults to +18335550199.
	TollFreeNumber string
	// HoldDescription is a campaign description the adapter's registry keeps in review until it
	// is withdrawn; "" skips the spec of a withdrawal during review.
	HoldDescription string
	// PauseReviews, when set, keeps the adapter's registry from deciding any review until the
	// function it returns is called, so that the spec of a repeated submission makes its repeat
	// while the review is pending (a registry reviews an amendment of a decided submission again,
	// with a verdict of its own). nil: that spec relies on the registry taking longer to decide
	// than the two submissions take to arrive.
	PauseReviews func() (resume func())
	// Registered tells whether the carrier's registry (its fake, or the simulator's state) holds
	// a submission under reference, pending or approved; nil skips the withdrawal specs.
	Registered func(ctx context.Context, reference string) bool
	// Inbound makes the carrier deliver an MMS through the adapter; nil skips the inbound media
	// specs.
	Inbound InboundMMS
	// Unsupported names the registry operations the adapter answers with carriers.ErrUnsupported
	// (Registration, Import, TollFreeVerification, Withdrawal); their specs check that answer and skip the
	// rest. Any other ErrUnsupported fails.
	Unsupported []Operation
	// Messaging names the numbers of the Messenger specs; the zero value takes their defaults.
	Messaging Messaging
}

// Operation is a registry operation an adapter may declare unsupported.
type Operation string

// Registry operations.
const (
	// Registration is SubmitCampaign of a campaign to register (no TCR id).
	Registration Operation = "registration"
	// Import is SubmitCampaign of a campaign registered elsewhere (a TCR id).
	Import Operation = "import"
	// TollFreeVerification is SubmitTollFreeVerification.
	TollFreeVerification Operation = "toll-free verification"
	// Withdrawal is WithdrawCampaign.
	Withdrawal Operation = "withdrawal"
)

// unsupported reports whether the harness declares op unsupported.
func (h *Harness) unsupported(op Operation) bool { return slices.Contains(h.Unsupported, op) }

// Inventory names numbers of an adapter's inventory.
type Inventory struct {
	// Country ("US" or "CA") and AreaCode ("415") select available local numbers.
	Country, AreaCode string
	// TollFreePrefix is a toll-free prefix with available numbers ("833").
	TollFreePrefix string
	// Unknown is a well-formed number the adapter cannot provision; "" skips that spec.
	Unknown string
}

// Run registers the conformance specs in the calling suite (use it as `var _ = carriertest.Run(…)`).
// setup returns the harness; it is called before each spec, so it may return what BeforeSuite
// built. Each capability's specs live in a file of their own; a new capability adds its group
// below.
func Run(setup func() *Harness) bool {
	return Describe("carrier conformance", func() {
		h := &Harness{}
		BeforeEach(func() {
			*h = *setup()
			if h.Carrier == nil || h.Reports == nil {
				Fail("carriertest: the Harness needs Carrier and Reports")
			}
			if h.Timeout == 0 {
				h.Timeout = 15 * time.Second
			}
		})
		numberInventorySpecs(h)
		campaignRegistrySpecs(h)
		messengerSpecs(h)
		inboundMediaSpecs(h)
	})
}

// Recorder is a carriers.Reporter that records every report the adapter makes, and can refuse
// reports to check that the adapter makes them again.
type Recorder struct {
	mu      sync.Mutex
	reports []carriers.Report
	refuse  map[string]int
	refused []carriers.Report
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{refuse: map[string]int{}} }

// ErrRefused is what the Recorder answers to a report it was told to refuse.
var ErrRefused = errors.New("carriertest: report refused")

// Report records r, or refuses it when told to.
func (rec *Recorder) Report(_ context.Context, r carriers.Report) error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if ref := reference(r); rec.refuse[ref] > 0 {
		rec.refuse[ref]--
		rec.refused = append(rec.refused, r)
		return ErrRefused
	}
	rec.reports = append(rec.reports, r)
	return nil
}

// Refuse makes the next n reports about reference (a verdict's or a receipt's) fail.
func (rec *Recorder) Refuse(reference string, n int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.refuse[reference] += n
}

// Reports returns the reports accepted so far, oldest first.
func (rec *Recorder) Reports() []carriers.Report {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.reports)
}

// Refused returns the reports refused so far, oldest first.
func (rec *Recorder) Refused() []carriers.Report {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.refused)
}

// Verdicts returns the verdicts accepted about reference, oldest first.
func (rec *Recorder) Verdicts(reference string) []carriers.Verdict {
	var out []carriers.Verdict
	for _, r := range rec.Reports() {
		if r.Verdict != nil && r.Verdict.Reference == reference {
			out = append(out, *r.Verdict)
		}
	}
	return out
}

// reference is what a report is about: the reference of a verdict or of a receipt.
func reference(r carriers.Report) string {
	switch {
	case r.Verdict != nil:
		return r.Verdict.Reference
	case r.Receipt != nil:
		return r.Receipt.Reference
	}
	return ""
}

// newReference returns a fresh id of our kind (cpn_…, tfc_…, acct_…) for a submission.
func newReference(prefix string) string {
	return typeid.Must(typeid.WithPrefix(prefix)).String()
}
