package main

import (
	"context"

	"github.com/switchboard/switchboard/service"
)

// simInbound injects a message from a handset. (Built by the messaging core.)
func simInbound(ctx context.Context, core *service.Core, args []string, o *output) error {
	return service.ErrNotImplemented
}

// simOutbox lists what the simulated carrier delivered to handsets. (Built by the messaging core.)
func simOutbox(ctx context.Context, core *service.Core, args []string, o *output) error {
	return service.ErrNotImplemented
}
