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

// accountCommand is `switchboard account quiet-hours`: an account's settings that the operator
// may change without the API (the API's PATCH /accounts/{id} changes the same fields).
func (a *app) accountCommand() *cobra.Command {
	var (
		account    string
		on, off    bool
		start, end string
	)
	quiet := &cobra.Command{
		Use:   "quiet-hours --account acct_… [--on|--off] [--start HH:MM] [--end HH:MM]",
		Short: "Show or change an account's quiet hours",
		Long: `Show or change an account's quiet hours. When they are on, a message or blast message that
would go out outside the window (08:00 to 21:00 unless set), in the recipient's local time, is
held as scheduled until the window opens. Verification codes and replies to a contact who wrote
within 24 hours are never held. The window may run past midnight (--start 22:00 --end 06:00);
its start and end must differ.`,
		Example: `  switchboard account quiet-hours --account acct_… --on
  switchboard account quiet-hours --account acct_… --start 09:00 --end 20:00
  switchboard account quiet-hours --account acct_… --off --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if account == "" {
				return errors.New("account quiet-hours: --account is required")
			}
			var change service.QuietHoursChange
			switch {
			case on:
				change.Enabled = &on
			case off:
				change.Enabled = new(bool)
			}
			if cmd.Flags().Changed("start") {
				change.Start = &start
			}
			if cmd.Flags().Changed("end") {
				change.End = &end
			}
			return a.withStore(cmd, true, func(ctx context.Context, st *store.Store) error {
				acct, err := st.AccountByID(ctx, account)
				if err != nil {
					return lookupError(err, "account", account)
				}
				if change != (service.QuietHoursChange{}) {
					acct, err = st.UpdateAccount(ctx, acct.ProjectID, acct.ID, store.AccountPatch{}, func(a *store.Account) error {
						if err := service.Changeable(a); err != nil {
							return err
						}
						return change.Apply(a)
					})
					if err != nil {
						return err
					}
				}
				w := service.QuietHours{Start: acct.QuietHoursStart, End: acct.QuietHoursEnd}
				return a.print(map[string]any{"account_id": acct.ID, "quiet_hours": map[string]any{"enabled": acct.QuietHours,
					"start": service.FormatClock(w.Start), "end": service.FormatClock(w.End)}}, func(out io.Writer) {
					state := "off"
					if acct.QuietHours {
						state = "on"
					}
					fmt.Fprintf(out, "quiet hours of %s: %s; messages go out from %s to %s in the recipient's local time\n",
						acct.ID, state, service.FormatClock(w.Start), service.FormatClock(w.End))
				})
			})
		},
	}
	f := quiet.Flags()
	f.StringVar(&account, "account", "", "account id (required)")
	f.BoolVar(&on, "on", false, "hold messages outside the window")
	f.BoolVar(&off, "off", false, "send at any hour")
	f.StringVar(&start, "start", "", "local time (HH:MM) from which messages go out")
	f.StringVar(&end, "end", "", "local time (HH:MM) from which messages are held until the start")
	quiet.MarkFlagsMutuallyExclusive("on", "off")
	return group("account", "An account's settings", quiet)
}
