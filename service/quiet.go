package service

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/switchboard/switchboard/store"
)

// Quiet hours (issue 21). An account that turns them on has each message that would go out
// outside its sending window, in the recipient's local time, held as `scheduled` until the
// window opens: the send stores it with send_at at the opening, and the scheduled path sends it
// (as any scheduled message: cancelable until then, then queued, sent and announced in order).
// The recipient's zone comes from the number's prefix (libphonenumber's time-zone data); a number
// that maps to several zones takes the account's time_zone when it is one of them, otherwise the
// window must be open in all of them. Verification codes (their own path) and replies to a
// contact who wrote within ReplyWindow are never held, nor is anything when quiet hours are off:
// the send then checks one field.

// QuietHours is an account's sending window: messages go out from Start (included) to End
// (excluded), in minutes after the recipient's local midnight. Start after End wraps past
// midnight (22:00 to 06:00 sends at night only). Start equal to End is refused.
type QuietHours struct {
	Start, End int
}

// DefaultQuietHours is the window an account has until it sets its own: 08:00 to 21:00.
var DefaultQuietHours = QuietHours{Start: store.DefaultQuietHoursStart, End: store.DefaultQuietHoursEnd}

// ReplyWindow is how recently a contact must have written for a message to them to go out at
// any hour: a reply within it is never held.
const ReplyWindow = 24 * time.Hour

const minutesPerDay = 24 * 60

// ParseClock reads a time of day written HH:MM (00:00 to 23:59) as minutes after midnight.
func ParseClock(s string) (int, error) {
	digit := func(i int) (int, bool) { return int(s[i] - '0'), s[i] >= '0' && s[i] <= '9' }
	if len(s) == 5 && s[2] == ':' {
		h1, ok1 := digit(0)
		h2, ok2 := digit(1)
		m1, ok3 := digit(3)
		m2, ok4 := digit(4)
		if h, m := h1*10+h2, m1*10+m2; ok1 && ok2 && ok3 && ok4 && h < 24 && m < 60 {
			return h*60 + m, nil
		}
	}
	return 0, fmt.Errorf("%q is not a time of day (HH:MM, 00:00 to 23:59)", s)
}

// FormatClock writes minutes after midnight as HH:MM. A time of day (every stored window's) is
// written without fmt (GET /accounts/{id} writes two); anything else as fmt writes %02d:%02d.
func FormatClock(minutes int) string {
	if minutes < 0 || minutes >= minutesPerDay {
		return fmt.Sprintf("%02d:%02d", minutes/60, minutes%60)
	}
	h, m := minutes/60, minutes%60
	return string([]byte{byte('0' + h/10), byte('0' + h%10), ':', byte('0' + m/10), byte('0' + m%10)})
}

// Validate refuses a window that is empty (or everything) or outside a day; field names the
// request's object of the window ("quiet_hours" in the API).
func (q QuietHours) Validate(field string) error {
	switch {
	case q.Start < 0 || q.Start >= minutesPerDay:
		return Invalid(field+".start", "is not a time of day (HH:MM, 00:00 to 23:59)")
	case q.End < 0 || q.End >= minutesPerDay:
		return Invalid(field+".end", "is not a time of day (HH:MM, 00:00 to 23:59)")
	case q.Start == q.End:
		return Invalid(field+".end", "must differ from start: a window from a time to itself would never (or always) be open; turn quiet hours off instead")
	}
	return nil
}

// QuietHoursChange is a change to an account's quiet hours (the API's quiet_hours, the
// command line's flags); nil fields are left as they are.
type QuietHoursChange struct {
	Enabled    *bool
	Start, End *string
}

// Apply changes the account's quiet hours and refuses a window that is not valid (one whose
// start equals its end included, whichever of the two the change gives), naming the fields
// as quiet_hours.start and quiet_hours.end.
func (c QuietHoursChange) Apply(a *store.Account) error {
	w := QuietHours{Start: a.QuietHoursStart, End: a.QuietHoursEnd}
	if a.QuietHoursStart == a.QuietHoursEnd { // a new account: the default window
		w = DefaultQuietHours
	}
	for _, f := range []struct {
		field string
		in    *string
		out   *int
	}{{"quiet_hours.start", c.Start, &w.Start}, {"quiet_hours.end", c.End, &w.End}} {
		if f.in == nil {
			continue
		}
		m, err := ParseClock(*f.in)
		if err != nil {
			return Invalid(f.field, "is not a time of day (HH:MM, 00:00 to 23:59)")
		}
		*f.out = m
	}
	if err := w.Validate("quiet_hours"); err != nil {
		return err
	}
	if c.Enabled != nil {
		a.QuietHours = *c.Enabled
	}
	a.QuietHoursStart, a.QuietHoursEnd = w.Start, w.End
	return nil
}

// String is the window as HH:MM-HH:MM.
func (q QuietHours) String() string { return FormatClock(q.Start) + "-" + FormatClock(q.End) }

// openAt reports whether the window is open at a wall-clock time.
func (q QuietHours) openAt(local time.Time) bool {
	m := local.Hour()*60 + local.Minute()
	if q.Start < q.End {
		return q.Start <= m && m < q.End
	}
	return m >= q.Start || m < q.End
}

// nextOpen is the first instant at or after t at which the window is open in loc. Days are
// counted on loc's calendar, so a DST change moves the opening with the wall clock; an opening
// that falls in an hour the clock skips comes when the clock is next in the window (02:30 on the
// night the clock goes from 02:00 to 03:00 opens at 03:00).
func (q QuietHours) nextOpen(t time.Time, loc *time.Location) time.Time {
	local := t.In(loc)
	if q.openAt(local) {
		return t
	}
	y, mo, d := local.Date()
	for i := 0; i < 3; i++ {
		c := time.Date(y, mo, d+i, q.Start/60, q.Start%60, 0, 0, loc)
		if cl := c.In(loc); cl.Hour()*60+cl.Minute() != q.Start {
			// The start fell in a DST gap (time.Date then answers an instant near it): the first
			// minute around it at which the clock is in the window.
			from := c.Add(-3 * time.Hour)
			if t.After(from) {
				from = t
			}
			for at := from.Truncate(time.Minute); at.Before(c.Add(3 * time.Hour)); at = at.Add(time.Minute) {
				if at.After(t) && q.openAt(at.In(loc)) {
					return at
				}
			}
			continue
		}
		if c.After(t) {
			return c
		}
	}
	return t // unreachable for a valid window: it opens every day
}

// Release returns the first instant at or after t at which the window is open in every zone of
// zones, and false when there is none within two days (zones too far apart for one window).
func (q QuietHours) Release(t time.Time, zones []*time.Location) (time.Time, bool) {
	limit := t.Add(48 * time.Hour)
	for !t.After(limit) {
		moved := false
		for _, z := range zones {
			if n := q.nextOpen(t, z); n.After(t) {
				t, moved = n, true
			}
		}
		if !moved {
			return t, true
		}
	}
	return time.Time{}, false
}

// ReleaseFor returns when a message to number, due at t, may go out under the window: t itself
// when it may go then. accountZone (nil for none) decides between the zones of a number that
// maps to several, and stands for the zone of a number that maps to none; a number whose zone
// cannot be told (several zones with no common window and no account zone, or none) is not held.
func (q QuietHours) ReleaseFor(number string, accountZone *time.Location, t time.Time) time.Time {
	zones := recipientZones.of(number)
	switch {
	case len(zones) == 1:
	case accountZone != nil && (len(zones) == 0 || slices.ContainsFunc(zones, func(z *time.Location) bool {
		return z.String() == accountZone.String()
	})):
		zones = []*time.Location{accountZone}
	case len(zones) == 0:
		return t
	}
	if at, ok := q.Release(t, zones); ok {
		return at
	}
	if accountZone == nil {
		return t
	}
	at, _ := q.Release(t, []*time.Location{accountZone})
	return at
}

// holdForQuietHours holds an outbound message that the account's quiet hours keep from going
// out when it is due (now, or its own send_at): it becomes `scheduled` with send_at at the
// window's opening. A reply to a contact who wrote within ReplyWindow goes out as it is.
func (m *Messages) holdForQuietHours(ctx context.Context, sc *store.SendContext, msg *store.Message, now time.Time) error {
	due := now
	if msg.SendAt != nil {
		due = *msg.SendAt
	}
	q := QuietHours{Start: sc.QuietHoursStart, End: sc.QuietHoursEnd}
	at := q.ReleaseFor(msg.ToNumber, zoneNamed(sc.TimeZone), due)
	if !at.After(due) {
		return nil
	}
	if sc.Known != nil && sc.Known.Contact != nil {
		replying, err := m.cfg.Store.InboundSince(ctx, sc.Known.Contact.ID, now.Add(-ReplyWindow))
		if err != nil || replying {
			return err
		}
	}
	at = at.UTC().Truncate(time.Microsecond)
	msg.Status, msg.SendAt = store.StatusScheduled, &at
	return nil
}

// quietHoursOf is the window of an account whose quiet hours are on, nil when they are off.
func quietHoursOf(a *store.Account) *QuietHours {
	if !a.QuietHours {
		return nil
	}
	return &QuietHours{Start: a.QuietHoursStart, End: a.QuietHoursEnd}
}

// holdBlastPart holds a blast's message as a send does (a blast is never a reply).
func holdBlastPart(q *QuietHours, a *store.Account, msg *store.Message, now time.Time) {
	if at := q.ReleaseFor(msg.ToNumber, zoneNamed(a.TimeZone), now); at.After(now) {
		at = at.UTC().Truncate(time.Microsecond)
		msg.Status, msg.SendAt = store.StatusScheduled, &at
	}
}

// zoneCache remembers the zones of recipients' numbers: libphonenumber's lookup walks the
// number's prefixes and loading a zone parses its rules, which a held send would otherwise pay
// for every message. It holds at most maxZoneCache numbers (then starts afresh) and each zone once.
type zoneCache struct {
	mu      sync.RWMutex
	numbers map[string][]*time.Location
	zones   sync.Map // name → *time.Location, or nil for a name this system cannot load
}

const maxZoneCache = 100_000

// recipientZones is the process's cache: what it holds follows from the number alone (the
// library's data is compiled in), so every service shares it.
var recipientZones = &zoneCache{numbers: map[string][]*time.Location{}}

// of returns the zones of an E.164 number, none when the data does not know it.
func (c *zoneCache) of(number string) []*time.Location {
	c.mu.RLock()
	zones, ok := c.numbers[number]
	c.mu.RUnlock()
	if ok {
		return zones
	}
	names, err := phonenumbers.GetTimezonesForPrefix(number)
	if err == nil {
		for _, n := range names {
			if n == phonenumbers.UNKNOWN_TIMEZONE {
				continue
			}
			if z := c.zone(n); z != nil {
				zones = append(zones, z)
			}
		}
	}
	c.mu.Lock()
	if len(c.numbers) >= maxZoneCache {
		c.numbers = map[string][]*time.Location{}
	}
	c.numbers[number] = zones
	c.mu.Unlock()
	return zones
}

// zone loads a zone by name once.
func (c *zoneCache) zone(name string) *time.Location {
	if z, ok := c.zones.Load(name); ok {
		loc, _ := z.(*time.Location)
		return loc
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		loc = nil
	}
	c.zones.Store(name, loc)
	return loc
}

// zoneNamed is the account's time zone, nil when it has none (or one this system cannot load).
func zoneNamed(name *string) *time.Location {
	if name == nil || *name == "" {
		return nil
	}
	return recipientZones.zone(*name)
}
