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
// operator vouches for it); a registration, a toll-free verification and a withdrawal are not
// SMPP operations and answer carriers.ErrUnsupported, so the core says so.

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

// SubmitTollFreeVerification answers carriers.ErrUnsupported: toll-free numbers are verified
// with the SMSC's operator.
func (c *Carrier) SubmitTollFreeVerification(context.Context, carriers.TollFreeSubmission) error {
	return fmt.Errorf("smpp: verify toll-free numbers with the SMSC's operator: %w", carriers.ErrUnsupported)
}

// WithdrawCampaign answers carriers.ErrUnsupported: the operator withdraws a campaign where it
// registered it.
func (c *Carrier) WithdrawCampaign(context.Context, string) error {
	return fmt.Errorf("smpp: withdraw the campaign with the SMSC's operator: %w", carriers.ErrUnsupported)
}

var _ carriers.CampaignRegistry = (*Carrier)(nil)
