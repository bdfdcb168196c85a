package sim

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"

	"github.com/switchboard/switchboard/carriers"
)

// RegistrySender is the short code from which the simulated registry texts brand verification
// codes, as The Campaign Registry texts a sole proprietor's mobile number.
const RegistrySender = "72782"

// SendBrandVerification texts a sole proprietor's mobile number a fresh 6-digit brand
// verification code from RegistrySender, through the outbox like any message (a repeated
// Reference sends nothing). The simulated registry's verdicts do not wait for the code: the
// simulator shows that the message goes out, not an identity check.
func (c *Carrier) SendBrandVerification(ctx context.Context, b carriers.BrandVerification) error {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return fmt.Errorf("sim: draw brand verification code: %w", err)
	}
	body := fmt.Sprintf("Your brand verification code from The Campaign Registry is %06d. Reply YES to confirm your registration.", n.Int64())
	_, err = c.Submit(ctx, carriers.Outbound{Reference: b.Reference, From: RegistrySender, To: b.MobileNumber, Body: body,
		Encoding: "gsm7", Segments: 1})
	return err
}

var _ carriers.BrandVerifier = (*Carrier)(nil)
