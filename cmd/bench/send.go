package main

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// Issue 4's targets on the 2-core machine with PostgreSQL.
const (
	sendTarget      = 1500 // accepted sends per second
	sendP99Target   = 50 * time.Millisecond
	deliveredTarget = 1000 // messages reaching delivered per second, sustained
)

// sendHandsets is how many distinct recipients the scenario cycles through: the first send to
// each creates its contact and conversation, later ones find them.
const sendHandsets = 2000

// runSend is the "send" scenario (issue 4): clients POST /accounts/{account_id}/messages in the
// to/from shape from one local number attached to an active campaign, while the job workers of
// the same process dispatch them to the simulated carrier (receipts at once) and record the
// receipts. It reports the accepted sends/s with API latency, then the rate at which messages
// reach `delivered`, both while the clients send and until the last one is delivered.
func runSend(ctx context.Context, b *Bench) error {
	b.rep.Note("send: one sender number, unpaced (a negative Pacing rate) so the pipeline, not the configured per-number rate, is measured; simulated receipts at once; %d recipients in rotation", sendHandsets)
	return b.EachDatabase(ctx, func(ctx context.Context, db *Database) error {
		s, acct, from, err := b.startSending(ctx, db)
		if err != nil {
			return err
		}
		defer s.Close()
		url := s.URL + "/accounts/" + acct + "/messages"
		var n atomic.Int64
		op := func(ctx context.Context, _ int) error {
			i := n.Add(1)
			body := fmt.Sprintf(`{"to":"+1555%07d","from":"%s","body":"Your order %d is ready for pickup."}`, i%sendHandsets, from, i)
			return call(ctx, s.Client, http.MethodPost, url, s.Key, []byte(body), nil)
		}

		counts := startDeliveryCounter(ctx, db.Store)
		start := time.Now()
		res, err := b.Measure(ctx, Phase{DB: db.Name, Key: "send", Name: "POST /accounts/{account_id}/messages", Op: op})
		if err != nil {
			counts.stop()
			return err
		}
		sendEnd := time.Now()
		accepted, err := countMessages(ctx, db.Store, "")
		if err != nil {
			counts.stop()
			return err
		}
		// Wait for the backlog to drain: every accepted message reaches a final state.
		deadline := time.Now().Add(3 * time.Minute)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			open, err := countOpen(ctx, db.Store)
			if err != nil {
				counts.stop()
				return err
			}
			if open == 0 {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		samples := counts.stop()
		delivered, _ := countMessages(ctx, db.Store, store.StatusDelivered)
		failed, _ := countMessages(ctx, db.Store, store.StatusFailed)

		// Sustained rate: deliveries inside the measured window (after warm-up), per second.
		from0, to0 := start.Add(b.opts.Warmup), sendEnd
		inWindow := samples.between(from0, to0)
		windowRate := float64(inWindow) / to0.Sub(from0).Seconds()
		last := samples.lastChange()
		drainRate := float64(delivered) / last.Sub(start).Seconds()
		b.rep.Note("send db=%s: %d messages accepted, %d delivered, %d failed; the last was delivered %.1fs after the clients stopped",
			db.Name, accepted, delivered, failed, last.Sub(sendEnd).Seconds())
		win := &Result{Scenario: b.scenario, DB: db.Name, Phase: "delivered", Name: "messages reaching delivered", RPS: windowRate}
		all := &Result{Scenario: b.scenario, DB: db.Name, Phase: "drain", Name: "messages reaching delivered", RPS: drainRate}
		b.rep.Note("send db=%s: end-to-end %.0f delivered/s while the clients sent, %.0f delivered/s from the first send to the last delivery",
			db.Name, windowRate, drainRate)
		if db.Name == "postgres" {
			b.rep.Target(res, "accepted sends", sendTarget)
			verdict := "met"
			if res.P99 > sendP99Target {
				verdict = "NOT met"
			}
			b.rep.Note("send db=postgres: target: API p99 ≤ %s — measured %s: %s", sendP99Target, fmtDur(res.P99), verdict)
			b.rep.Target(win, "end-to-end delivered while sending", deliveredTarget)
			b.rep.Target(all, "end-to-end delivered including the drain", deliveredTarget)
		}
		return nil
	})
}

// startSending starts the API with every sender unpaced (a negative Pacing rate), so the pipeline
// and not the configured per-number rate is measured, and creates an account through the API with
// a local number attached to an active campaign (inserted directly in the store). It returns the
// server, the account id and the number.
func (b *Bench) startSending(ctx context.Context, db *Database) (*apiServer, string, string, error) {
	unpaced := service.Pacing{Local: -1, TollFree: -1, ShortCode: -1, Demo: -1}
	s, err := b.startAPI(ctx, db, apiConfig{Pacing: unpaced})
	if err != nil {
		return nil, "", "", err
	}
	var acct struct {
		ID string `json:"id"`
	}
	if err := call(ctx, s.Client, http.MethodPost, s.URL+"/accounts", s.Key, []byte(`{"name":"Bench account"}`), &acct); err != nil {
		s.Close()
		return nil, "", "", fmt.Errorf("create account: %w", err)
	}
	number, err := insertSender(ctx, db.Store, s.ProjectID, acct.ID)
	if err != nil {
		s.Close()
		return nil, "", "", err
	}
	return s, acct.ID, number, nil
}

func countMessages(ctx context.Context, st *store.Store, status string) (int64, error) {
	q := st.DB().WithContext(ctx).Model(&store.Message{})
	if status != "" {
		q = q.Where("status = ?", status)
	}
	var n int64
	err := q.Count(&n).Error
	return n, err
}

func countOpen(ctx context.Context, st *store.Store) (int64, error) {
	var n int64
	err := st.DB().WithContext(ctx).Model(&store.Message{}).
		Where("status IN ?", []string{store.StatusQueued, store.StatusScheduled, store.StatusSending, store.StatusSent}).Count(&n).Error
	return n, err
}

// deliverySample is the number of delivered messages at a time.
type deliverySample struct {
	at        time.Time
	delivered int64
}

type deliverySamples []deliverySample

// between is how many messages were delivered between two times (by the nearest samples).
func (s deliverySamples) between(from, to time.Time) int64 {
	var a, b int64
	for _, x := range s {
		if !x.at.After(from) {
			a = x.delivered
		}
		if !x.at.After(to) {
			b = x.delivered
		}
	}
	return b - a
}

// lastChange is when the delivered count last grew.
func (s deliverySamples) lastChange() time.Time {
	if len(s) == 0 {
		return time.Now()
	}
	t := s[0].at
	for i := 1; i < len(s); i++ {
		if s[i].delivered != s[i-1].delivered {
			t = s[i].at
		}
	}
	return t
}

type deliveryCounter struct {
	quit chan struct{}
	done chan deliverySamples
}

// startDeliveryCounter samples the number of delivered messages every 250 ms.
func startDeliveryCounter(ctx context.Context, st *store.Store) *deliveryCounter {
	c := &deliveryCounter{quit: make(chan struct{}), done: make(chan deliverySamples, 1)}
	go func() {
		var out deliverySamples
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			n, err := countMessages(ctx, st, store.StatusDelivered)
			if err == nil {
				out = append(out, deliverySample{at: time.Now(), delivered: n})
			}
			select {
			case <-c.quit:
				c.done <- out
				return
			case <-ctx.Done():
				c.done <- out
				return
			case <-tick.C:
			}
		}
	}()
	return c
}

func (c *deliveryCounter) stop() deliverySamples {
	close(c.quit)
	return <-c.done
}
