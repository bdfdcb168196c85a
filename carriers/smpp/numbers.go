package smpp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/switchboard/switchboard/carriers"
)

// An SMPP route has no number inventory of its own to buy from: the operator's numbers are those
// the SMSC routes to the bind. The operator lists them in the route's inventory (`switchboard
// smpp numbers add`), and accounts take them through the API as they would buy one: a search
// offers the free ones, a purchase takes one, a release gives it back. Toll-free numbers in the
// inventory are the operator's to verify with the SMSC's operator: their toll-free verification
// is approved at once.

// defaultSearchLimit is the answer's size when a query has no limit.
const defaultSearchLimit = 25

// portInPrefix is the toll-free prefix that only port-in brings, never an inventory.
const portInPrefix = "800"

// ErrNotInventory refuses a number that cannot be in the route's inventory.
var ErrNotInventory = errors.New("smpp: not a US or Canadian local or toll-free number (800 numbers come by port-in)")

// PoolNumberOf checks a number (E.164) for the route's inventory and tells its type and country.
func PoolNumberOf(number string, at time.Time) (PoolNumber, error) {
	num, err := phonenumbers.Parse(number, "")
	if err != nil || num.GetCountryCode() != 1 || !phonenumbers.IsValidNumber(num) ||
		phonenumbers.Format(num, phonenumbers.E164) != number || strings.HasPrefix(number, "+1"+portInPrefix) {
		return PoolNumber{}, fmt.Errorf("%s: %w", number, ErrNotInventory)
	}
	p := PoolNumber{Number: number, AddedAt: at.UTC()}
	switch phonenumbers.GetNumberType(num) {
	case phonenumbers.TOLL_FREE:
		p.Type, p.Country = "toll_free", "US"
	case phonenumbers.FIXED_LINE, phonenumbers.MOBILE, phonenumbers.FIXED_LINE_OR_MOBILE:
		p.Type, p.Country = "local", phonenumbers.GetRegionCodeForNumber(num)
	}
	if p.Type == "" || (p.Country != "US" && p.Country != "CA") {
		return PoolNumber{}, fmt.Errorf("%s: %w", number, ErrNotInventory)
	}
	return p, nil
}

// SearchNumbers offers the free numbers of the route's inventory.
func (c *Carrier) SearchNumbers(ctx context.Context, q carriers.NumberQuery) ([]carriers.AvailableNumber, error) {
	if q.AreaCode == portInPrefix {
		return nil, carriers.ErrPortInOnly
	}
	country := q.Country
	if country == "" || q.Type == "toll_free" {
		country = "US" // toll-free numbers serve the whole plan; the inventory keeps them as US
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultSearchLimit
	}
	free, err := c.cfg.Store.FreePoolNumbers(ctx, q.Type, country, q.AreaCode, limit)
	if err != nil {
		return nil, fmt.Errorf("smpp: search numbers: %w", err)
	}
	out := make([]carriers.AvailableNumber, len(free))
	for i, n := range free {
		out[i] = carriers.AvailableNumber{Number: n.Number, Country: q.Country, Type: n.Type}
		if out[i].Country == "" {
			out[i].Country = n.Country
		}
	}
	return out, nil
}

// ProvisionNumber takes a free number of the route's inventory.
func (c *Carrier) ProvisionNumber(ctx context.Context, number string) error {
	if strings.HasPrefix(number, "+1"+portInPrefix) {
		return carriers.ErrPortInOnly
	}
	taken, err := c.cfg.Store.TakePoolNumber(ctx, number, c.cfg.Now().UTC())
	if err != nil {
		return fmt.Errorf("smpp: provision %s: %w", number, err)
	}
	if !taken {
		return fmt.Errorf("smpp: %s is not a free number of the route's inventory: %w", number, carriers.ErrNumberUnavailable)
	}
	return nil
}

// ReleaseNumber gives a number back to the route's inventory.
func (c *Carrier) ReleaseNumber(ctx context.Context, number string) error {
	if err := c.cfg.Store.ReturnPoolNumber(ctx, number); err != nil {
		return fmt.Errorf("smpp: release %s: %w", number, err)
	}
	return nil
}

var _ carriers.NumberInventory = (*Carrier)(nil)
