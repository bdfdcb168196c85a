package main

import (
	"context"
	"flag"

	"github.com/switchboard/switchboard/service"
)

// simInbound injects a message from a handset. (Built by the messaging core.)
func simInbound(fs *flag.FlagSet) simRun {
	return func(ctx context.Context, core *service.Core, args []string, o *output) error {
		return service.ErrNotImplemented
	}
}

// simOutbox lists what the simulated carrier delivered to handsets. (Built by the messaging core.)
func simOutbox(fs *flag.FlagSet) simRun {
	return func(ctx context.Context, core *service.Core, args []string, o *output) error {
		return service.ErrNotImplemented
	}
}
