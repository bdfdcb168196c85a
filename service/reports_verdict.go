package service

import (
	"context"

	"github.com/switchboard/switchboard/carriers"
)

// verdict applies a campaign registry's decision. (Built by the phone numbers and campaigns work.)
func (r *Reports) verdict(ctx context.Context, carrier string, v *carriers.Verdict) error {
	return ErrNotImplemented
}
