package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
)

// authRounds is how many alternating pairs (empty handler, then authenticated read) the auth
// scenario measures per database.
const authRounds = 3

// authTarget is issue 21's target 4: authenticated GET /accounts/{id} at ≥ 50 % of an empty Echo
// handler's throughput over TLS, in the same run.
const authTarget = 50.0

// runAuth is the "auth" scenario (issue 21, target 4): on each database, authRounds alternating
// pairs of phases, the empty Echo handler over TLS then the authenticated GET /accounts/{id}, so
// that both see the same machine; it prints each pair's ratio and their median against the target.
func runAuth(ctx context.Context, b *Bench) error {
	b.rep.Note("auth: %d alternating pairs per database (empty Echo handler over TLS, then authenticated GET /accounts/{id}), same client, same concurrency; the API is wired as in the api scenario (rate limiting off, job workers running, API request logs written)", authRounds)
	return b.EachDatabase(ctx, func(ctx context.Context, db *Database) error {
		bs, err := b.startBaseline(db.Dir)
		if err != nil {
			return err
		}
		defer bs.Close()
		s, account, err := b.startAPIWithAccount(ctx, db)
		if err != nil {
			return err
		}
		defer s.Close()
		url := s.URL + "/accounts/" + account
		// The same Authorization header as the API's, so the requests are the same size; Echo ignores it.
		const key = "sk_live_BASELINEBASELINEBASELINEBASELINEBASELINEBASELINE"
		var ratios []float64
		for round := 1; round <= authRounds; round++ {
			base, err := b.Measure(ctx, Phase{DB: db.Name, Key: fmt.Sprintf("baseline%d", round), Name: fmt.Sprintf("empty Echo handler (pair %d)", round),
				Op: func(ctx context.Context, _ int) error {
					return call(ctx, bs.Client, http.MethodGet, bs.URL, key, nil, nil)
				}})
			if err != nil {
				return err
			}
			get, err := b.Measure(ctx, Phase{DB: db.Name, Key: fmt.Sprintf("get%d", round), Name: fmt.Sprintf("GET /accounts/{id} (pair %d)", round),
				Op: func(ctx context.Context, _ int) error {
					return call(ctx, s.Client, http.MethodGet, url, s.Key, nil, nil)
				}})
			if err != nil {
				return err
			}
			b.rep.Ratio(get, base)
			if base.RPS > 0 {
				ratios = append(ratios, 100*get.RPS/base.RPS)
			}
		}
		if len(ratios) == 0 {
			return nil
		}
		slices.Sort(ratios)
		median := ratios[len(ratios)/2]
		verdict := "met"
		if median < authTarget {
			verdict = "NOT met"
		}
		b.rep.Note("auth db=%s: median of %d pairs: authenticated GET /accounts/{id} at %.1f%% of the empty Echo handler (pairs: %s); target ≥ %.0f%%: %s",
			db.Name, len(ratios), median, fmtPercents(ratios), authTarget, verdict)
		return nil
	})
}

// fmtPercents prints percentages as "41.2%, 44.0%".
func fmtPercents(ps []float64) string {
	out := ""
	for i, p := range ps {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%.1f%%", p)
	}
	return out
}
