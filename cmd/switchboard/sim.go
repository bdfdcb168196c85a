package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/switchboard/switchboard/store"
)

const simUsage = `switchboard sim: drive the simulated carrier (SWITCHBOARD_CARRIER=sim).

  switchboard sim campaign approve|reject <cpn_…|tfc_…>   force a review verdict
  switchboard sim inbound --from +1… --to +1… --body TEXT  a handset sends a message
  switchboard sim outbox [--to +1…]                        what handsets received
`

// simCommand runs a `switchboard sim` subcommand against the same database and domain as serve.
func simCommand(ctx context.Context, cfg *Config, args []string, o *output, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(o.w, simUsage)
		return nil
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return withStore(ctx, cfg, true, func(st *store.Store) error {
		core, err := newCore(cfg, st, log)
		if err != nil {
			return err
		}
		switch args[0] {
		case "campaign":
			return simCampaign(ctx, core, args[1:], o)
		case "inbound":
			return simInbound(ctx, core, args[1:], o)
		case "outbox":
			return simOutbox(ctx, core, args[1:], o)
		}
		return fmt.Errorf("unknown sim command %q\n\n%s", args[0], simUsage)
	})
}
