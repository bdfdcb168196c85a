package twilio

import (
	"cmp"
	"context"
	"errors"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboard/switchboard/carriers"
)

// portInPrefix is the toll-free prefix Switchboard only takes by port-in, whatever Twilio sells.
const portInPrefix = "800"

// tollFreePrefixes are the toll-free prefixes whose numbers can be bought.
var tollFreePrefixes = []string{"833", "844", "855", "866", "877", "888"}

// tollFree matches the toll-free numbers that can be bought: 833 to 888, never 800.
var tollFree = regexp.MustCompile(`^\+18(33|44|55|66|77|88)\d{7}$`)

// defaultSearchLimit is the answer's size when a query has no limit.
const defaultSearchLimit = 25

// Error codes of IncomingPhoneNumbers that mean "this number cannot be had".
var unavailableCodes = map[int]bool{
	21421: true, // PhoneNumber is invalid
	21422: true, // PhoneNumber is not available
	21452: true, // no phone numbers found
}

// availableNumber is an entry of an AvailablePhoneNumbers answer. Twilio gives a local number's
// place as decimal strings (empty when it has none).
type availableNumber struct {
	PhoneNumber string `json:"phone_number"`
	ISOCountry  string `json:"iso_country"`
	Latitude    string `json:"latitude"`
	Longitude   string `json:"longitude"`
}

// nearDistanceMiles is how far from NumberQuery.Near Twilio is asked to look (its Distance, in
// miles; Twilio's default is 25, which leaves rural places without numbers).
const nearDistanceMiles = 100

// SearchNumbers lists numbers Twilio offers: GET
// /Accounts/{AccountSid}/AvailablePhoneNumbers/{Country}/Local.json (or TollFree.json) with
// AreaCode and PageSize, and for a local search near a place NearLatLong and Distance, the answer
// then sorted nearest first by the places Twilio gives. Toll-free numbers outside 833 to 888 are
// left out.
func (c *Carrier) SearchNumbers(ctx context.Context, q carriers.NumberQuery) ([]carriers.AvailableNumber, error) {
	if q.AreaCode == portInPrefix {
		return nil, carriers.ErrPortInOnly
	}
	country := q.Country
	if country == "" {
		country = "US"
	}
	kind := "Local"
	if q.Type == "toll_free" {
		kind = "TollFree"
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultSearchLimit
	}
	// A toll-free search without a prefix asks for each prefix that can be bought in turn, so
	// that the 800 numbers Twilio also sells do not crowd them out of the answer.
	areaCodes := []string{q.AreaCode}
	if q.Type == "toll_free" && q.AreaCode == "" {
		areaCodes = tollFreePrefixes
	}
	path := c.client.accountPath("/AvailablePhoneNumbers/" + url.PathEscape(country) + "/" + kind + ".json")
	out := []carriers.AvailableNumber{}
	for _, ac := range areaCodes {
		query := url.Values{"PageSize": {strconv.Itoa(min(limit-len(out), 1000))}}
		if ac != "" {
			query.Set("AreaCode", ac)
		}
		if q.Near != nil && q.Type == "local" {
			query.Set("NearLatLong", strconv.FormatFloat(q.Near.Latitude, 'f', -1, 64)+","+strconv.FormatFloat(q.Near.Longitude, 'f', -1, 64))
			query.Set("Distance", strconv.Itoa(nearDistanceMiles))
		}
		var res struct {
			Numbers []availableNumber `json:"available_phone_numbers"`
		}
		if err := c.client.do(ctx, http.MethodGet, path, query, nil, &res); err != nil {
			var apiErr *apiError
			if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
				return []carriers.AvailableNumber{}, nil // a country Twilio has no numbers in
			}
			return nil, err
		}
		if q.Near != nil && q.Type == "local" {
			sortNearest(res.Numbers, *q.Near)
		}
		for _, n := range res.Numbers {
			if len(out) == limit {
				return out, nil
			}
			if q.Type == "toll_free" && !tollFree.MatchString(n.PhoneNumber) {
				continue
			}
			out = append(out, carriers.AvailableNumber{Number: n.PhoneNumber, Country: country, Type: q.Type})
		}
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// ProvisionNumber buys a number: POST /Accounts/{AccountSid}/IncomingPhoneNumbers.json with
// PhoneNumber, pointing its messaging and voice webhooks at the adapter's callbacks.
func (c *Carrier) ProvisionNumber(ctx context.Context, number string) error {
	if strings.HasPrefix(number, "+1"+portInPrefix) {
		return carriers.ErrPortInOnly
	}
	form := url.Values{
		"PhoneNumber":          {number},
		"SmsUrl":               {c.callbackURL("/messages/inbound")},
		"SmsMethod":            {http.MethodPost},
		"VoiceUrl":             {c.callbackURL("/voice")},
		"VoiceMethod":          {http.MethodPost},
		"StatusCallback":       {c.callbackURL("/voice/status")},
		"StatusCallbackMethod": {http.MethodPost},
	}
	err := c.client.do(ctx, http.MethodPost, c.client.accountPath("/IncomingPhoneNumbers.json"), nil, form, nil)
	var apiErr *apiError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusBadRequest && unavailableCodes[apiErr.Code] {
		return carriers.ErrNumberUnavailable
	}
	return err
}

// ReleaseNumber gives a number back: it finds the number's sid with GET
// IncomingPhoneNumbers.json?PhoneNumber=…, then DELETEs IncomingPhoneNumbers/{Sid}.json. A
// number the account does not hold (any more) is released already.
func (c *Carrier) ReleaseNumber(ctx context.Context, number string) error {
	var res struct {
		Numbers []struct {
			SID         string `json:"sid"`
			PhoneNumber string `json:"phone_number"`
		} `json:"incoming_phone_numbers"`
	}
	if err := c.client.do(ctx, http.MethodGet, c.client.accountPath("/IncomingPhoneNumbers.json"),
		url.Values{"PhoneNumber": {number}}, nil, &res); err != nil {
		return err
	}
	for _, n := range res.Numbers {
		if n.PhoneNumber != number {
			continue
		}
		err := c.client.do(ctx, http.MethodDelete, c.client.accountPath("/IncomingPhoneNumbers/"+url.PathEscape(n.SID)+".json"), nil, nil, nil)
		var apiErr *apiError
		if err != nil && !(errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound) {
			return err
		}
	}
	return nil
}

var _ carriers.NumberInventory = (*Carrier)(nil)

// sortNearest orders numbers nearest to a place first; a number without a place goes last.
func sortNearest(numbers []availableNumber, near carriers.Location) {
	distance := func(n availableNumber) float64 {
		lat, err1 := strconv.ParseFloat(n.Latitude, 64)
		lon, err2 := strconv.ParseFloat(n.Longitude, 64)
		if err1 != nil || err2 != nil {
			return math.Inf(1)
		}
		// An equirectangular approximation orders points well at the distances asked for.
		x := (lon - near.Longitude) * math.Cos((lat+near.Latitude)/2*math.Pi/180)
		y := lat - near.Latitude
		return x*x + y*y
	}
	slices.SortStableFunc(numbers, func(a, b availableNumber) int { return cmp.Compare(distance(a), distance(b)) })
}
