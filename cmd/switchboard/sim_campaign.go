package main

import (
	"context"
	"flag"

	"github.com/switchboard/switchboard/service"
)

// simCampaign forces a simulated review verdict: `sim campaign approve|reject <id>`.
// (Built by the phone numbers and campaigns work.)
func simCampaign(fs *flag.FlagSet) simRun {
	return func(ctx context.Context, core *service.Core, args []string, o *output) error {
		return service.ErrNotImplemented
	}
}
