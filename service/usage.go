package service

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/switchboard/switchboard/store"
)

// MaxUsageDays is the longest period one usage report covers.
const MaxUsageDays = 366

// UsageQuery selects a usage report: days From to To (UTC dates, both included), one account's
// or, with AccountID empty, every account's of the project. Zero dates default to the 30 days
// that end today.
type UsageQuery struct {
	AccountID string
	From, To  time.Time
}

// UsageReport is a project's billable usage per account and day.
type UsageReport struct {
	// From and To are the first and last day covered (UTC midnight).
	From, To time.Time
	// Days has a row per account and day with any usage, by day then account.
	Days []store.UsageDay
}

// Usage reports what a project's accounts used, day by day: the figures a billing system needs,
// the same for the console, the command line and the API.
type Usage struct {
	store *store.Store
	now   func() time.Time
}

// NewUsage returns the usage service.
func NewUsage(st *store.Store, now func() time.Time) (*Usage, error) {
	if st == nil {
		return nil, errors.New("service: NewUsage needs a store")
	}
	if now == nil {
		now = time.Now
	}
	return &Usage{store: st, now: now}, nil
}

// Report returns the usage of a project's accounts over q's days.
func (u *Usage) Report(ctx context.Context, projectID string, q UsageQuery) (*UsageReport, error) {
	day := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC) }
	to := day(u.now().UTC())
	if !q.To.IsZero() {
		to = day(q.To)
	}
	from := to.AddDate(0, 0, -29)
	if !q.From.IsZero() {
		from = day(q.From)
	}
	switch {
	case from.After(to):
		return nil, Invalid("from", "must not be after to")
	case to.Sub(from) >= MaxUsageDays*24*time.Hour:
		return nil, Invalid("from", "a report covers at most "+strconv.Itoa(MaxUsageDays)+" days")
	case from.Year() < 2000:
		return nil, Invalid("from", "must be in the year 2000 or later")
	}
	if q.AccountID != "" {
		if _, err := u.store.GetAccount(ctx, projectID, q.AccountID); err != nil {
			return nil, err
		}
	}
	days, err := u.store.Usage(ctx, projectID, q.AccountID, from, to.AddDate(0, 0, 1))
	if err != nil {
		return nil, err
	}
	return &UsageReport{From: from, To: to, Days: days}, nil
}

// UsageCSVHeader is the header row of WriteUsageCSV.
var UsageCSVHeader = []string{"date", "account_id", "sms_outbound", "segments_outbound", "sms_inbound", "segments_inbound",
	"mms_outbound", "mms_inbound", "voice_minutes", "verifications"}

// WriteUsageCSV writes a report as CSV: UsageCSVHeader, then a row per account and day.
func WriteUsageCSV(w io.Writer, r *UsageReport) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(UsageCSVHeader); err != nil {
		return err
	}
	for _, d := range r.Days {
		row := []string{d.Day, d.AccountID}
		for _, n := range []int64{d.SMSOutbound, d.SegmentsOutbound, d.SMSInbound, d.SegmentsInbound, d.MMSOutbound, d.MMSInbound,
			d.VoiceMinutes, d.Verifications} {
			row = append(row, strconv.FormatInt(n, 10))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
