package main

import (
	"context"

	"github.com/switchboard/switchboard/service"
)

// simCampaign forces a simulated review verdict. (Built by the phone numbers and campaigns work.)
func simCampaign(ctx context.Context, core *service.Core, args []string, o *output) error {
	return service.ErrNotImplemented
}
