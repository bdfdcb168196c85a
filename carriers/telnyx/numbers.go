package telnyx

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

// portInPrefix is the toll-free prefix Switchboard only takes by port-in.
const portInPrefix = "800"

// tollFreePrefixes are the toll-free prefixes whose numbers can be bought.
var tollFreePrefixes = []string{"833", "844", "855", "866", "877", "888"}

// tollFree matches the toll-free numbers that can be bought: 833 to 888, never 800.
var tollFree = regexp.MustCompile(`^\+18(33|44|55|66|77|88)\d{7}$`)

// defaultSearchLimit is the answer's size when a query has no limit.
const defaultSearchLimit = 25

// SearchNumbers lists numbers Telnyx offers: GET /v2/available_phone_numbers with
// filter[country_code], filter[phone_number_type] (local, toll_free),
// filter[national_destination_code] and filter[limit]. Toll-free numbers outside 833 to 888 are
// left out.
func (c *Carrier) SearchNumbers(ctx context.Context, q carriers.NumberQuery) ([]carriers.AvailableNumber, error) {
	if q.AreaCode == portInPrefix {
		return nil, carriers.ErrPortInOnly
	}
	country := q.Country
	if country == "" {
		country = "US"
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultSearchLimit
	}
	// A toll-free search without a prefix asks for each prefix that can be bought in turn, so
	// that the 800 numbers Telnyx also sells do not crowd them out of the answer.
	codes := []string{q.AreaCode}
	if q.Type == "toll_free" && q.AreaCode == "" {
		codes = tollFreePrefixes
	}
	out := []carriers.AvailableNumber{}
	for _, code := range codes {
		query := url.Values{"filter[country_code]": {country}, "filter[phone_number_type]": {q.Type},
			"filter[limit]": {strconv.Itoa(min(limit-len(out), 100))}}
		if code != "" {
			query.Set("filter[national_destination_code]", code)
		}
		var res []struct {
			PhoneNumber string `json:"phone_number"`
		}
		if err := c.call(ctx, http.MethodGet, "/v2/available_phone_numbers", query, nil, &res); err != nil {
			return nil, err
		}
		for _, n := range res {
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

// ProvisionNumber orders a number into the messaging profile: POST /v2/number_orders.
func (c *Carrier) ProvisionNumber(ctx context.Context, number string) error {
	if strings.HasPrefix(number, "+1"+portInPrefix) {
		return carriers.ErrPortInOnly
	}
	body := map[string]any{"phone_numbers": []map[string]string{{"phone_number": number}},
		"messaging_profile_id": c.cfg.MessagingProfileID}
	err := c.call(ctx, http.MethodPost, "/v2/number_orders", nil, body, nil)
	var apiErr *apiError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusUnprocessableEntity {
		return carriers.ErrNumberUnavailable
	}
	return err
}

// ReleaseNumber deletes a number of the account: GET /v2/phone_numbers?filter[phone_number]=…,
// then DELETE /v2/phone_numbers/{id}. A number the account does not hold is released already.
func (c *Carrier) ReleaseNumber(ctx context.Context, number string) error {
	id, err := c.numberID(ctx, number)
	if err != nil || id == "" {
		return err
	}
	if err := c.call(ctx, http.MethodDelete, "/v2/phone_numbers/"+url.PathEscape(id), nil, nil, nil); err != nil && !isStatus(err, http.StatusNotFound) {
		return err
	}
	return nil
}

// numberID is the id of one of the account's numbers, "" when it holds none.
func (c *Carrier) numberID(ctx context.Context, number string) (string, error) {
	var res []struct {
		ID          string `json:"id"`
		PhoneNumber string `json:"phone_number"`
	}
	if err := c.call(ctx, http.MethodGet, "/v2/phone_numbers", url.Values{"filter[phone_number]": {number}}, nil, &res); err != nil {
		return "", err
	}
	for _, n := range res {
		if n.PhoneNumber == number {
			return n.ID, nil
		}
	}
	return "", nil
}

var _ carriers.NumberInventory = (*Carrier)(nil)
