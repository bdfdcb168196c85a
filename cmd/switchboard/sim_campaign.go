package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

const simCampaignUsage = "usage: switchboard sim campaign approve|reject <cpn_…|tfc_…> [--json] [--reason TEXT]"

// simCampaign forces a simulated review verdict: `sim campaign approve|reject <id>`. The verdict
// goes through the core's inbound path exactly as the simulated registry reports one, so a
// campaign that is not under review is left as it is.
func (a *app) simCampaign() *cobra.Command {
	var reason string
	c := &cobra.Command{
		Use:   "campaign approve|reject cpn_…|tfc_…",
		Short: "Force the review verdict of a 10DLC or toll-free campaign under review",
		Example: `  switchboard sim campaign approve cpn_01m80b5xceezebxkpwpb9v23gf
  switchboard sim campaign reject tfc_01m80b5xceezebxkpwpb9v23gf --reason "no opt-out language"`,
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return []cobra.Completion{"approve", "reject"}, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 || (args[0] != "approve" && args[0] != "reject") {
				return errors.New(simCampaignUsage)
			}
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				id := args[1]
				before, after, err := core.Operator.SimVerdict(ctx, a.actor(), "", id, args[0] == "approve", reason)
				switch {
				case errors.Is(err, &service.Error{Type: service.TypeValidation}):
					return fmt.Errorf("%q is not a campaign id (cpn_…) or toll-free campaign id (tfc_…)\n%s", id, simCampaignUsage)
				case errors.Is(err, store.ErrNotFound):
					return fmt.Errorf("no campaign %s", id)
				case err != nil:
					return err
				}
				return a.print(map[string]any{"id": id, "status": after, "changed": after != before}, func(w io.Writer) {
					if after == before {
						fmt.Fprintf(w, "%s is %s, not under review by the simulated carrier: unchanged\n", id, after)
						return
					}
					fmt.Fprintf(w, "%s: %s -> %s\n", id, before, after)
				})
			})
		},
	}
	c.Flags().StringVar(&reason, "reason", "rejected by the operator", "the rejection reason (reject only)")
	return c
}
