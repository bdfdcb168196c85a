package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

const simUsage = `switchboard sim: drive the simulated carrier (SWITCHBOARD_CARRIER=sim).

  switchboard sim campaign approve|reject <cpn_…|tfc_…>   force a review verdict
  switchboard sim call --from +1… --to +1… [--answer|--no-answer] [--voicemail-seconds N]
                                                           a handset calls one of the numbers
  switchboard sim inbound --from +1… --to +1… --body TEXT  a handset sends a message
  switchboard sim outbox [--to +1…]                        what handsets received

Each takes --json and the configuration flags of serve.
`

// simRun is a sim subcommand once its flags are parsed: it gets the assembled domain and the
// positional arguments.
type simRun func(ctx context.Context, core *service.Core, args []string, o *output) error

// simCommand runs a `switchboard sim` subcommand against the same database and domain as serve.
// Each subcommand defines its own flags on fs and returns what to run.
func simCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, simUsage)
		return nil
	}
	fs := flag.NewFlagSet("switchboard sim "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, finish := bindConfig(fs)
	asJSON := fs.Bool("json", false, "print machine-readable JSON")
	var run simRun
	switch args[0] {
	case "campaign":
		run = simCampaign(fs)
	case "call":
		run = simCall(fs)
	case "inbound":
		run = simInbound(fs)
	case "outbox":
		run = simOutbox(fs)
	default:
		return fmt.Errorf("unknown sim command %q\n\n%s", args[0], simUsage)
	}
	if err := parse(fs, args[1:], finish); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return withStore(ctx, cfg, true, func(st *store.Store) error {
		core, err := newCore(cfg, st, log)
		if err != nil {
			return err
		}
		return run(ctx, core, fs.Args(), &output{w: stdout, json: asJSON})
	})
}
