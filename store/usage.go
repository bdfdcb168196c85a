package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"go.jetify.com/typeid"
)

// UsageDay is what one account used on one day (UTC): the billable figures of its messages,
// calls and verifications created that day.
type UsageDay struct {
	AccountID string
	// Day is YYYY-MM-DD.
	Day string
	// SMSOutbound counts SMS submitted to a carrier (sent, delivered, or failed after sending);
	// SegmentsOutbound their segments. The inbound figures count received SMS.
	SMSOutbound      int64
	SegmentsOutbound int64
	SMSInbound       int64
	SegmentsInbound  int64
	// MMSOutbound and MMSInbound count MMS, which are not billed by the segment.
	MMSOutbound int64
	MMSInbound  int64
	// VoiceMinutes adds up each call's duration rounded up to the minute.
	VoiceMinutes int64
	// Verifications counts the verifications created (each sends a code).
	Verifications int64
}

// Usage returns a project's usage per account and day for days from..to (UTC, to excluded),
// only one account's when accountID is not empty, ordered by day then account. Rows are found
// through each table's (account, id) index: ids are time-ordered, so a day is an id range.
func (s *Store) Usage(ctx context.Context, projectID, accountID string, from, to time.Time) ([]UsageDay, error) {
	accounts := "account_id IN (SELECT id FROM accounts WHERE project_id = ?)"
	args := []any{projectID}
	if accountID != "" {
		accounts += " AND account_id = ?"
		args = append(args, accountID)
	}
	day := "date(created_at)"
	if s.dialect == Postgres {
		day = "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
	}
	rows := map[[2]string]*UsageDay{}
	get := func(acct, d string) *UsageDay {
		k := [2]string{acct, d}
		if rows[k] == nil {
			rows[k] = &UsageDay{AccountID: acct, Day: d}
		}
		return rows[k]
	}
	span := func(prefix string) []any {
		return append(append([]any{}, args...), idAt(prefix, from), idAt(prefix, to))
	}

	var msgs []struct {
		AccountID                                   string
		Day                                         string
		SMSOut, SegOut, SMSIn, SegIn, MMSOut, MMSIn int64
	}
	err := s.q(ctx).Raw(`SELECT account_id, `+day+` AS day,
		SUM(CASE WHEN direction = 'outbound' AND type = 'sms' THEN 1 ELSE 0 END) AS sms_out,
		SUM(CASE WHEN direction = 'outbound' AND type = 'sms' THEN segments ELSE 0 END) AS seg_out,
		SUM(CASE WHEN direction = 'inbound' AND type = 'sms' THEN 1 ELSE 0 END) AS sms_in,
		SUM(CASE WHEN direction = 'inbound' AND type = 'sms' THEN segments ELSE 0 END) AS seg_in,
		SUM(CASE WHEN direction = 'outbound' AND type = 'mms' THEN 1 ELSE 0 END) AS mms_out,
		SUM(CASE WHEN direction = 'inbound' AND type = 'mms' THEN 1 ELSE 0 END) AS mms_in
		FROM messages WHERE `+accounts+` AND id >= ? AND id < ? AND (direction = 'inbound' OR sent_at IS NOT NULL)
		GROUP BY account_id, `+day, span(PrefixMessage)...).Scan(&msgs).Error
	if err != nil {
		return nil, translate(err, "usage of messages")
	}
	for _, m := range msgs {
		u := get(m.AccountID, m.Day)
		u.SMSOutbound, u.SegmentsOutbound, u.SMSInbound, u.SegmentsInbound = m.SMSOut, m.SegOut, m.SMSIn, m.SegIn
		u.MMSOutbound, u.MMSInbound = m.MMSOut, m.MMSIn
	}

	var counts []struct {
		AccountID string
		Day       string
		N         int64
	}
	err = s.q(ctx).Raw(`SELECT account_id, `+day+` AS day, SUM((duration + 59) / 60) AS n
		FROM calls WHERE `+accounts+` AND id >= ? AND id < ? AND duration > 0 GROUP BY account_id, `+day,
		span(PrefixCall)...).Scan(&counts).Error
	if err != nil {
		return nil, translate(err, "usage of calls")
	}
	for _, c := range counts {
		get(c.AccountID, c.Day).VoiceMinutes = c.N
	}
	counts = nil
	err = s.q(ctx).Raw(`SELECT account_id, `+day+` AS day, COUNT(*) AS n
		FROM verifications WHERE `+accounts+` AND id >= ? AND id < ? GROUP BY account_id, `+day,
		span(PrefixVerification)...).Scan(&counts).Error
	if err != nil {
		return nil, translate(err, "usage of verifications")
	}
	for _, c := range counts {
		get(c.AccountID, c.Day).Verifications = c.N
	}

	out := make([]UsageDay, 0, len(rows))
	for _, u := range rows {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Day != out[j].Day {
			return out[i].Day < out[j].Day
		}
		return out[i].AccountID < out[j].AccountID
	})
	return out, nil
}

// idAt returns the least TypeID with this prefix minted at t or later: ids are UUIDv7, whose
// leading 48 bits are the Unix time in milliseconds, and TypeIDs sort as their UUIDs do.
func idAt(prefix string, t time.Time) string {
	var u [16]byte
	binary.BigEndian.PutUint64(u[0:8], uint64(t.UnixMilli())<<16)
	u[6] = 0x70
	id, err := typeid.FromUUIDBytesWithPrefix(prefix, u[:])
	if err != nil {
		panic(fmt.Sprintf("store: id bound with prefix %q: %v", prefix, err))
	}
	return id.String()
}
