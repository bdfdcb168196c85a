package sim

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/switchboard/switchboard/carriers"
)

// The simulated inventory is deterministic: the same query always offers the same numbers, less
// those the installation holds.
//
//   - Local numbers: +1 AAA 555 01XX (XX = 00 to 99), 100 numbers for every area code AAA that the
//     North American numbering plan assigns to the country (US or CA). The 555-01XX block is
//     reserved for fiction, so the simulator never texts a real person. Without an area code, a
//     search offers DefaultAreaCodes in order.
//   - Toll-free numbers: +1 PPP 555 01XX for PPP in TollFreePrefixes, offered in both countries.
//   - Anything in the 800 prefix is refused with carriers.ErrPortInOnly.
//   - A local search near a place (NumberQuery.Near) offers the area codes of areaCodePlaces
//     nearest first.
var (
	// TollFreePrefixes are the prefixes the simulator sells toll-free numbers in.
	TollFreePrefixes = []string{"833", "844", "855", "866", "877", "888"}
	// DefaultAreaCodes are offered, in this order, to a local search without an area code.
	DefaultAreaCodes = map[string][]string{
		"US": {"415", "212", "312", "512", "206", "617"},
		"CA": {"416", "604", "514", "403"},
	}
)

// portInPrefix is the toll-free prefix that only port-in brings.
const portInPrefix = "800"

// defaultSearchLimit is the answer's size when a query has no limit.
const defaultSearchLimit = 25

// inventoryNumber matches the numbers of the scheme: area code or prefix, then 555 01XX.
var inventoryNumber = regexp.MustCompile(`^\+1(\d{3})55501\d{2}$`)

// SearchNumbers offers the inventory's numbers that are not provisioned.
func (c *Carrier) SearchNumbers(ctx context.Context, q carriers.NumberQuery) ([]carriers.AvailableNumber, error) {
	if q.AreaCode == portInPrefix {
		return nil, carriers.ErrPortInOnly
	}
	country := q.Country
	near := q.Near != nil && q.Type == "local"
	switch {
	case country == "" && near && q.AreaCode != "":
		country = areaCodeCountry(q.AreaCode)
	case country == "" && !near:
		country = "US"
	}
	if country != "US" && country != "CA" && !(country == "" && near) {
		return []carriers.AvailableNumber{}, nil
	}
	var prefixes []string
	switch {
	case q.Type == "toll_free" && q.AreaCode == "":
		prefixes = TollFreePrefixes
	case q.Type == "toll_free" && slices.Contains(TollFreePrefixes, q.AreaCode):
		prefixes = []string{q.AreaCode}
	case q.Type == "local" && q.AreaCode == "" && near:
		prefixes = nearestAreaCodes(country, q.Near.Latitude, q.Near.Longitude)
	case q.Type == "local" && q.AreaCode == "":
		prefixes = DefaultAreaCodes[country]
	case q.Type == "local" && areaCodeCountry(q.AreaCode) == country:
		prefixes = []string{q.AreaCode}
	}
	var candidates []string
	countryOf := map[string]string{}
	for _, p := range prefixes {
		c := country
		if c == "" {
			c = areaCodeCountry(p)
		}
		for i := range 100 {
			n := fmt.Sprintf("+1%s55501%02d", p, i)
			candidates = append(candidates, n)
			countryOf[n] = c
		}
	}
	var taken []string
	if len(candidates) > 0 {
		var err error
		if taken, err = c.cfg.Store.ProvisionedAmong(ctx, candidates); err != nil {
			return nil, fmt.Errorf("sim: search numbers: %w", err)
		}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultSearchLimit
	}
	out := []carriers.AvailableNumber{}
	for _, n := range candidates {
		if len(out) == limit {
			break
		}
		if !slices.Contains(taken, n) {
			out = append(out, carriers.AvailableNumber{Number: n, Country: countryOf[n], Type: q.Type})
		}
	}
	return out, nil
}

// ProvisionNumber takes a number of the inventory for the installation.
func (c *Carrier) ProvisionNumber(ctx context.Context, number string) error {
	m := inventoryNumber.FindStringSubmatch(number)
	switch {
	case strings.HasPrefix(number, "+1"+portInPrefix):
		return carriers.ErrPortInOnly
	case m == nil || (!slices.Contains(TollFreePrefixes, m[1]) && areaCodeCountry(m[1]) == ""):
		return fmt.Errorf("sim: %s is not in the inventory: %w", number, carriers.ErrNumberUnavailable)
	}
	fresh, err := c.cfg.Store.Provision(ctx, number, c.cfg.Now().UTC())
	if err != nil {
		return fmt.Errorf("sim: provision %s: %w", number, err)
	}
	if !fresh {
		return fmt.Errorf("sim: %s is provisioned already: %w", number, carriers.ErrNumberUnavailable)
	}
	return nil
}

// ReleaseNumber returns a number to the inventory; releasing one that is not provisioned is fine.
func (c *Carrier) ReleaseNumber(ctx context.Context, number string) error {
	if err := c.cfg.Store.Unprovision(ctx, number); err != nil {
		return fmt.Errorf("sim: release %s: %w", number, err)
	}
	return nil
}

// areaCodeCountry is the country ("US" or "CA") a geographic area code belongs to, or "".
func areaCodeCountry(area string) string {
	num, err := phonenumbers.Parse("+1"+area+"5550100", "")
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return ""
	}
	switch phonenumbers.GetNumberType(num) {
	case phonenumbers.FIXED_LINE, phonenumbers.MOBILE, phonenumbers.FIXED_LINE_OR_MOBILE:
		if r := phonenumbers.GetRegionCodeForNumber(num); r == "US" || r == "CA" {
			return r
		}
	}
	return ""
}

var _ carriers.NumberInventory = (*Carrier)(nil)
