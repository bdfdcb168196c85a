package twilio

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
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

// availableNumber is an entry of an AvailablePhoneNumbers answer.
type availableNumber struct {
	PhoneNumber string `json:"phone_number"`
	ISOCountry  string `json:"iso_country"`
}

// SearchNumbers lists numbers Twilio offers: GET
// /Accounts/{AccountSid}/AvailablePhoneNumbers/{Country}/Local.json (or TollFree.json) with
// AreaCode and PageSize. Toll-free numbers outside 833 to 888 are left out.
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
