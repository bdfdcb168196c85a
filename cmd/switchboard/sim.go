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

// simRun is a sim subcommand once its flags are parsed.
type simRun = coreRun

// simCommand runs a `switchboard sim` subcommand against the same database and domain as serve.
func simCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return coreCommand(ctx, "sim", simUsage, args, stdout, stderr, func(sub string, fs *flag.FlagSet) coreRun {
		switch sub {
		case "campaign":
			return simCampaign(fs)
		case "call":
			return simCall(fs)
		case "inbound":
			return simInbound(fs)
		case "outbox":
			return simOutbox(fs)
		}
		return nil
	})
}

// coreRun is an operator subcommand that acts on the assembled domain, once its flags are parsed:
// it gets the domain and the positional arguments.
type coreRun func(ctx context.Context, core *service.Core, args []string, o *output) error

// coreCommand runs `switchboard <group> <sub> …` against the same database and domain as serve.
// pick defines the subcommand's own flags on fs and returns what to run, or nil for an unknown
// subcommand; --json and serve's configuration flags are common to all.
func coreCommand(ctx context.Context, group, usage string, args []string, stdout, stderr io.Writer,
	pick func(sub string, fs *flag.FlagSet) coreRun) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	fs := flag.NewFlagSet("switchboard "+group+" "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, finish := bindConfig(fs)
	asJSON := fs.Bool("json", false, "print machine-readable JSON")
	run := pick(args[0], fs)
	if run == nil {
		return fmt.Errorf("unknown %s command %q\n\n%s", group, args[0], usage)
	}
	if err := parseInterspersed(fs, args[1:], finish); err != nil {
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
