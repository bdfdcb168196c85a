package smpp

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard/switchboard/carriers"
)

// SMPP has no campaign registry: the operator registers 10DLC campaigns with whoever runs the
// SMSC's route to the US networks, and the SMSC enforces them. The adapter's registry therefore
// only imports a campaign registered there, by its TCR id, and approves the import at once (the
// operator vouches for it), and approves the verification of the route's own toll-free numbers
// (see numbers.go); a registration and a withdrawal are not SMPP operations and answer
// carriers.ErrUnsupported, so the core says so.

// SubmitCampaign imports a campaign registered elsewhere (TCRID set), approving it through the
// Reporter; a campaign to register answers carriers.ErrUnsupported.
func (c *Carrier) SubmitCampaign(ctx context.Context, s carriers.CampaignSubmission) error {
	if s.TCRID == "" {
		return fmt.Errorf("smpp: register the campaign with the SMSC's operator and import it by TCR id: %w", carriers.ErrUnsupported)
	}
	if s.Reference == "" {
		return errors.New("smpp: a submission needs a reference")
	}
	v := &carriers.Verdict{Reference: s.Reference, Approved: true}
	if err := c.report(ctx, carriers.Report{Carrier: Name, Verdict: v}); err != nil {
		return fmt.Errorf("smpp: report the import of %s: %w", s.Reference, err)
	}
	return nil
}

// SubmitTollFreeVerification approves at once the verification of a toll-free number of the
// route's inventory (the operator verified it with the SMSC's operator before listing it); any
// other number answers carriers.ErrUnsupported.
func (c *Carrier) SubmitTollFreeVerification(ctx context.Context, s carriers.TollFreeSubmission) error {
	pool, err := c.cfg.Store.PoolNumbers(ctx)
	if err != nil {
		return err
	}
	listed := false
	for _, n := range pool {
		listed = listed || (n.Number == s.PhoneNumber && n.Type == "toll_free")
	}
	if !listed {
		return fmt.Errorf("smpp: %s is not a toll-free number of the route's inventory: %w", s.PhoneNumber, carriers.ErrUnsupported)
	}
	v := &carriers.Verdict{Reference: s.Reference, Approved: true}
	if err := c.report(ctx, carriers.Report{Carrier: Name, Verdict: v}); err != nil {
		return fmt.Errorf("smpp: report the verification of %s: %w", s.Reference, err)
	}
	return nil
}

// WithdrawCampaign answers carriers.ErrUnsupported: the operator withdraws a campaign where it
// registered it.
func (c *Carrier) WithdrawCampaign(context.Context, string) error {
	return fmt.Errorf("smpp: withdraw the campaign with the SMSC's operator: %w", carriers.ErrUnsupported)
}

var _ carriers.CampaignRegistry = (*Carrier)(nil)
