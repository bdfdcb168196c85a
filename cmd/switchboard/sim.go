package main

import (
	"github.com/spf13/cobra"
)

const simLong = `Drive the simulated carrier (SWITCHBOARD_CARRIER=sim, the default) as handsets and a
campaign registry would: these commands go through the same paths as a real carrier's reports,
against the same database as the running servers, whose job workers then carry out what they
enqueue (replies, webhooks).`

// simCommand is `switchboard sim …`.
func (a *app) simCommand() *cobra.Command {
	c := group("sim", "Drive the simulated carrier: inbound messages and calls, outbox, campaign verdicts",
		a.simCampaign(), a.simCall(), a.simInbound(), a.simOutbox())
	c.Long = simLong
	for _, sub := range c.Commands() {
		a.settings.register(sub.Flags(), scopeDomain)
	}
	return c
}
