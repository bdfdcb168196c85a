package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/smpp"
	"github.com/switchboard/switchboard/carriers/smpp/smsctest"
	"go.jetify.com/typeid"
)

// smppWindow is the window the scenario measures (issue 8), the adapter's default.
const smppWindow = 10

// runSMPP is the "smpp" scenario (issue 8): clients submit single-part messages through the SMPP
// adapter (Messenger.Submit, as the core's dispatch does: a recorded submission, a submit_sm in
// the window, the SMSC's id recorded) to the fake SMSC of carriers/smpp/smsctest over loopback
// TCP, which answers at once and sends a delivery receipt for each; the adapter resolves the
// receipts through the store and reports them. It reports submissions/s with their latency, and
// the receipts reported per second.
func runSMPP(ctx context.Context, b *Bench) error {
	b.rep.Note("smpp: window %d, no throughput cap; fake SMSC on loopback answering submit_sm at once, a DELIVRD receipt 5 ms later; a counting reporter in place of the core", smppWindow)
	return b.EachDatabase(ctx, func(ctx context.Context, db *Database) error {
		smsc, err := smsctest.Start(smsctest.Config{})
		if err != nil {
			return err
		}
		defer smsc.Close()
		rep := &countingReporter{}
		c, err := smpp.New(smpp.Config{Addr: smsc.Addr(), SystemID: "test", Password: "secret", Store: db.Store.SMPP(), Reporter: rep,
			Window: smppWindow, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		if err != nil {
			return err
		}
		c.Start()
		defer func() { _ = c.Close() }()
		for deadline := time.Now().Add(10 * time.Second); !c.Bound(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				return fmt.Errorf("smpp: no bind to the fake SMSC")
			}
		}
		var n atomic.Int64
		op := func(ctx context.Context, _ int) error {
			i := n.Add(1)
			_, err := c.Submit(ctx, carriers.Outbound{Reference: typeid.Must(typeid.WithPrefix("msg")).String(),
				From: "+18335550100", To: fmt.Sprintf("+1555%07d", i%sendHandsets), Body: fmt.Sprintf("Your order %d is ready for pickup.", i),
				Encoding: "gsm7", Segments: 1})
			return err
		}
		before := rep.receipts.Load()
		start := time.Now()
		if _, err := b.Measure(ctx, Phase{DB: db.Name, Key: "submit", Name: fmt.Sprintf("Submit over SMPP, window %d", smppWindow), Op: op}); err != nil {
			return err
		}
		// Let the last receipts arrive before counting.
		for deadline := time.Now().Add(30 * time.Second); smsc.Pending() > 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		}
		elapsed := time.Since(start)
		got := rep.receipts.Load() - before
		b.rep.Note("smpp db=%s: %d submit_sm accepted by the SMSC in all (warm-up included), %d receipts reported in %.1fs (%.0f/s), %d binds",
			db.Name, len(smsc.Parts()), got, elapsed.Seconds(), float64(got)/elapsed.Seconds(), smsc.Binds())
		return nil
	})
}

// countingReporter stands for the core: it takes every report and counts the receipts.
type countingReporter struct{ receipts atomic.Int64 }

func (r *countingReporter) Report(_ context.Context, rep carriers.Report) error {
	if rep.Receipt != nil {
		r.receipts.Add(1)
	}
	return nil
}
