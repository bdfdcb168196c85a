package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// simCall places an inbound call on one of the installation's numbers:
// `sim call --from +1… --to +1… [--answer|--no-answer] [--voicemail-seconds N]`. The call is
// reported through the same path as a real carrier's; an unanswered one leaves a voicemail whose
// audio is a WAV file of a tone that long.
func (a *app) simCall() *cobra.Command {
	var from, to string
	var answer, noAnswer bool
	var vmSeconds, talk int
	c := &cobra.Command{
		Use:   "call --from +1… --to +1… [--answer|--no-answer]",
		Short: "A handset calls one of the installation's numbers",
		Example: `  switchboard sim call --from +14155550123 --to +14155550100                 # answered: completed
  switchboard sim call --from +14155550123 --to +14155550100 --no-answer --voicemail-seconds 20
  switchboard sim call --from +14155550123 --to +14155550100 --no-answer --voicemail-seconds 0   # no_answer`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return errors.New("sim call: --from and --to are required")
			}
			if answer && noAnswer {
				return errors.New("sim call: --answer and --no-answer exclude each other")
			}
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				call := sim.Call{From: from, To: to, Answered: !noAnswer, TalkSeconds: talk}
				if noAnswer {
					call.VoicemailSeconds = vmSeconds
				}
				sc, err := simCarrier(core)
				if err != nil {
					return err
				}
				id, err := sc.PlaceCall(ctx, call)
				if err != nil {
					return err
				}
				c, err := core.Store.CallByCarrierID(ctx, sim.Name, id)
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("sim call: the call was not recorded: no account holds %s", to)
				}
				if err != nil {
					return err
				}
				out := map[string]any{"carrier_id": id, "call_id": c.ID, "status": c.Status, "duration": c.Duration,
					"from": c.FromNumber, "to": c.ToNumber, "voicemail_id": nil, "recording_id": nil}
				vm, err := core.Store.VoicemailOfCall(ctx, c.ID)
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
				if vm != nil {
					out["voicemail_id"], out["recording_id"] = vm.ID, vm.RecordingID
				}
				return a.print(out, func(w io.Writer) {
					fmt.Fprintf(w, "call %s from %s to %s: %s, %d s\n", c.ID, c.FromNumber, c.ToNumber, c.Status, c.Duration)
					if vm != nil {
						fmt.Fprintf(w, "voicemail %s (recording %s), %d s\n", vm.ID, vm.RecordingID, vm.Duration)
					}
				})
			})
		},
	}
	f := c.Flags()
	f.StringVar(&from, "from", "", "the handset's number (required)")
	f.StringVar(&to, "to", "", "one of the installation's numbers (required)")
	f.BoolVar(&answer, "answer", false, "the call is answered and completes (the default)")
	f.BoolVar(&noAnswer, "no-answer", false, "nobody answers: the caller leaves a voicemail (missed), or none (no_answer) with --voicemail-seconds 0")
	f.IntVar(&vmSeconds, "voicemail-seconds", 10, fmt.Sprintf("length of the voicemail of an unanswered call, 0 to %d", sim.MaxVoicemailSeconds))
	f.IntVar(&talk, "duration", 30, "seconds an answered call lasts")
	return c
}
