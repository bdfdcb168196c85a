package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Issue 6's targets with PostgreSQL.
const (
	blastRecipients     = 100_000
	blastAcceptTarget   = time.Second
	blastDeliveredLimit = 60 * time.Second
	blastWaitLimit      = 10 * time.Minute
)

// runBlast is the "blast" scenario (issue 6): one POST /accounts/{account_id}/blasts with 100,000
// E.164 numbers in `to` (about 1.6 MB of JSON) from one local number with an unthrottled
// simulated sender (pacing off, receipts at once). It reports the time to accept the request, the
// fan-out rate (recipients turned into queued messages per second) and the time until every
// message is delivered. PostgreSQL only: the targets are set there.
func runBlast(ctx context.Context, b *Bench) error {
	b.rep.Note("blast: %d recipients in one request, one local sender, pacing off, simulated receipts at once; PostgreSQL only", blastRecipients)
	return b.EachDatabase(ctx, func(ctx context.Context, db *Database) error {
		if db.Name != "postgres" {
			b.rep.Note("blast db=%s: skipped (the scenario's targets are for PostgreSQL)", db.Name)
			return nil
		}
		s, acct, from, err := b.startSending(ctx, db)
		if err != nil {
			return err
		}
		defer s.Close()
		to := make([]string, blastRecipients)
		for i := range to {
			to[i] = fmt.Sprintf("+1555%07d", i)
		}
		body, err := json.Marshal(map[string]any{"from": from, "body": "Spring sale: 20% off this week. Reply STOP to opt out.", "to": to})
		if err != nil {
			return err
		}
		var blast struct {
			ID string `json:"id"`
		}
		began := time.Now()
		if err := call(ctx, s.Client, http.MethodPost, s.URL+"/accounts/"+acct+"/blasts", s.Key, body, &blast); err != nil {
			return fmt.Errorf("create blast: %w", err)
		}
		accepted := time.Since(began)
		b.rep.Note("blast db=%s: %d recipients (%.1f MB request) accepted in %s", db.Name, blastRecipients, float64(len(body))/1e6, fmtDur(accepted))

		sql := db.Store.DB().WithContext(ctx)
		var fannedAt, deliveredAt time.Duration
		for time.Since(began) < blastWaitLimit && ctx.Err() == nil {
			var fanned, delivered int64
			if err := sql.Raw(`SELECT fanned_out FROM blasts WHERE id = ?`, blast.ID).Scan(&fanned).Error; err != nil {
				return err
			}
			if err := sql.Raw(`SELECT COUNT(*) FROM messages WHERE blast_id = ? AND status = 'delivered'`, blast.ID).Scan(&delivered).Error; err != nil {
				return err
			}
			if fannedAt == 0 && fanned >= blastRecipients {
				fannedAt = time.Since(began)
			}
			if delivered >= blastRecipients {
				deliveredAt = time.Since(began)
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		verdict := func(ok bool) string {
			if ok {
				return "met"
			}
			return "NOT met"
		}
		b.rep.Note("blast db=%s: target: accepted < %s — measured %s: %s", db.Name, blastAcceptTarget, fmtDur(accepted), verdict(accepted < blastAcceptTarget))
		if fannedAt > 0 {
			b.rep.Note("blast db=%s: fan-out of %d recipients done %s after the request: %.0f recipients/s", db.Name, blastRecipients,
				fmtDur(fannedAt), float64(blastRecipients)/fannedAt.Seconds())
		} else {
			b.rep.Note("blast db=%s: fan-out not finished within %s", db.Name, blastWaitLimit)
		}
		if deliveredAt > 0 {
			b.rep.Note("blast db=%s: target: all delivered within %s — measured %s (%.0f delivered/s): %s", db.Name, blastDeliveredLimit,
				fmtDur(deliveredAt), float64(blastRecipients)/deliveredAt.Seconds(), verdict(deliveredAt <= blastDeliveredLimit))
		} else {
			b.rep.Note("blast db=%s: target: all delivered within %s — NOT met (not all delivered within %s)", db.Name, blastDeliveredLimit, blastWaitLimit)
		}
		return nil
	})
}
