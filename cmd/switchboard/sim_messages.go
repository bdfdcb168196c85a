package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
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
func (a *app) simInbound() *cobra.Command {
	var from, to, body string
	c := &cobra.Command{
		Use:   "inbound --from +1… --to +1… --body TEXT",
		Short: "A handset sends a message to one of the installation's numbers",
		Example: `  switchboard sim inbound --from +14155550199 --to +14155550100 --body "Yes, 3pm works"
  switchboard sim inbound --from +14155550199 --to +14155550100 --body STOP --json   # {"message_id":"msg_…",…}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" || body == "" {
				return errors.New("sim inbound: --from, --to and --body are required")
			}
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				sc, err := simCarrier(core)
				if err != nil {
					return err
				}
				id, err := sc.Inbound(ctx, from, to, body, nil)
				if err != nil {
					return err
				}
				m, err := core.Store.InboundMessageByCarrierID(ctx, sim.Name, id)
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("sim inbound: the message was not recorded: no account holds %s", to)
				}
				if err != nil {
					return err
				}
				return a.print(map[string]any{"message_id": m.ID, "conversation_id": m.ConversationID, "carrier_id": id,
					"from": from, "to": to, "body": body}, func(w io.Writer) {
					fmt.Fprintf(w, "received %s from %s to %s (conversation %s)\n", m.ID, m.FromNumber, m.ToNumber, m.ConversationID)
				})
			})
		},
	}
	c.Flags().StringVar(&from, "from", "", "the handset's number (required)")
	c.Flags().StringVar(&to, "to", "", "one of the installation's numbers (required)")
	c.Flags().StringVar(&body, "body", "", "the text (required)")
	return c
}

// simOutbox lists what the simulated carrier delivered to handsets: `sim outbox [--to +1…]`.
func (a *app) simOutbox() *cobra.Command {
	var to string
	c := &cobra.Command{
		Use:   "outbox [--to +1…]",
		Short: "List what handsets received through the simulated carrier, oldest first",
		Example: `  switchboard sim outbox --to +14155550199
  switchboard sim outbox --json | jq -r '.[-1].body'    # e.g. the last verification code`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				entries, err := sim.Outbox(ctx, core.Store.Sim(), to)
				if err != nil {
					return err
				}
				return a.print(entries, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "TIME\tFROM\tTO\tPARTS\tMEDIA\tBODY")
					for _, e := range entries {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", e.CreatedAt.Format(time.RFC3339), e.From, e.To, e.Parts,
							len(e.Media), strings.ReplaceAll(e.Body, "\n", " "))
					}
					_ = tw.Flush()
				})
			})
		},
	}
	c.Flags().StringVar(&to, "to", "", "only messages to this handset")
	return c
}
