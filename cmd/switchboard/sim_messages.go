package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/service"
)

// simCarrier returns the simulated carrier of the assembled domain.
func simCarrier(core *service.Core) (*sim.Carrier, error) {
	c, err := core.Carriers.Get(sim.Name)
	if err != nil {
		return nil, fmt.Errorf("the simulated carrier is not configured (SWITCHBOARD_CARRIER=sim): %w", err)
	}
	sc, ok := c.(*sim.Carrier)
	if !ok {
		return nil, errors.New("the carrier named sim is not the simulated carrier")
	}
	return sc, nil
}

// simInbound injects a message from a handset: `sim inbound --from +1… --to +1… --body TEXT`.
// The message goes through the same inbound path as a real carrier's; a keyword's confirmation
// reply is queued for the serving instance's workers to send.
func simInbound(fs *flag.FlagSet) simRun {
	from := fs.String("from", "", "the handset's number (required)")
	to := fs.String("to", "", "one of the installation's numbers (required)")
	body := fs.String("body", "", "the text (required)")
	return func(ctx context.Context, core *service.Core, _ []string, o *output) error {
		if *from == "" || *to == "" || *body == "" {
			return errors.New("sim inbound: --from, --to and --body are required")
		}
		sc, err := simCarrier(core)
		if err != nil {
			return err
		}
		id, err := sc.Inbound(ctx, *from, *to, *body, nil)
		if err != nil {
			return err
		}
		return o.print(map[string]any{"carrier_id": id, "from": *from, "to": *to, "body": *body}, func(w io.Writer) {
			fmt.Fprintf(w, "delivered %s from %s to %s\n", id, *from, *to)
		})
	}
}

// simOutbox lists what the simulated carrier delivered to handsets: `sim outbox [--to +1…]`.
func simOutbox(fs *flag.FlagSet) simRun {
	to := fs.String("to", "", "only messages to this handset")
	return func(ctx context.Context, core *service.Core, _ []string, o *output) error {
		entries, err := sim.Outbox(ctx, core.Store.Sim(), *to)
		if err != nil {
			return err
		}
		return o.print(entries, func(w io.Writer) {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tFROM\tTO\tPARTS\tMEDIA\tBODY")
			for _, e := range entries {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", e.CreatedAt.Format(time.RFC3339), e.From, e.To, e.Parts,
					len(e.Media), strings.ReplaceAll(e.Body, "\n", " "))
			}
			_ = tw.Flush()
		})
	}
}
