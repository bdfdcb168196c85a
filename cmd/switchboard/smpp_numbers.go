package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard/switchboard/carriers/smpp"
	"github.com/switchboard/switchboard/store"
)

const smppLong = `Manage the SMPP route's numbers (SWITCHBOARD_CARRIER=smpp): the numbers the SMSC routes to this
installation. Accounts take them through the API as they would buy one (GET
/accounts/{id}/available_phone_numbers, POST /accounts/{id}/phone_numbers), and a released one comes
back here. A toll-free number listed here counts as verified with the SMSC's operator.`

// smppCommand is `switchboard smpp …`.
func (a *app) smppCommand() *cobra.Command {
	numbers := group("numbers", "The SMPP route's numbers: add, list, remove",
		a.smppNumbersAdd(), a.smppNumbersList(), a.smppNumbersRemove())
	c := group("smpp", "Operate the SMPP route: its numbers", numbers)
	c.Long = smppLong
	return c
}

// smppNumbersAdd lists numbers on the route: `smpp numbers add +1… [+1…]`.
func (a *app) smppNumbersAdd() *cobra.Command {
	return &cobra.Command{
		Use:     "add +1… [+1…]",
		Short:   "List numbers the SMSC routes to the installation (E.164, US or Canadian local or toll-free)",
		Example: "  switchboard smpp numbers add +14155550142 +18885550100",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns := make([]smpp.PoolNumber, len(args))
			for i, arg := range args {
				n, err := smpp.PoolNumberOf(arg, time.Now())
				if err != nil {
					return err
				}
				ns[i] = n
			}
			return a.withStore(cmd, true, func(ctx context.Context, st *store.Store) error {
				if err := st.SMPP().AddPoolNumbers(ctx, ns); err != nil {
					return err
				}
				return a.printPool(ctx, st)
			})
		},
	}
}

// smppNumbersList lists the route's numbers: `smpp numbers list`.
func (a *app) smppNumbersList() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the route's numbers and whether an account holds each",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd, true, a.printPool)
		},
	}
}

// smppNumbersRemove takes a number off the route: `smpp numbers remove +1…`.
func (a *app) smppNumbersRemove() *cobra.Command {
	return &cobra.Command{
		Use:   "remove +1…",
		Short: "Take a number that no account holds off the route",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd, true, func(ctx context.Context, st *store.Store) error {
				removed, err := st.SMPP().RemovePoolNumber(ctx, args[0])
				if err != nil {
					return err
				}
				if !removed {
					return errors.New("smpp numbers remove: " + args[0] + " is not on the route, or an account holds it (release it through the API first)")
				}
				return a.printPool(ctx, st)
			})
		},
	}
}

// printPool prints the route's numbers.
func (a *app) printPool(ctx context.Context, st *store.Store) error {
	pool, err := st.SMPP().PoolNumbers(ctx)
	if err != nil {
		return err
	}
	return a.print(pool, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NUMBER\tTYPE\tCOUNTRY\tHELD")
		for _, n := range pool {
			held := "no"
			if n.TakenAt != nil {
				held = "since " + n.TakenAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Number, n.Type, n.Country, held)
		}
		_ = tw.Flush()
	})
}
