package server

import (
	"net/http"
	"strconv"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/kit"
)

// accountAnswer is GetAccount's 200: the generated gen.GetAccount200JSONResponse's answer, the
// same header, status and bytes, with the account written by appendAccountJSON instead of by
// encoding/json's reflection (target 4's request).
type accountAnswer gen.Account

func (a accountAnswer) VisitGetAccountResponse(w http.ResponseWriter) error {
	buf := answerBuffers.Get().(*[]byte)
	return writeAnswer(w, http.StatusOK, buf, appendAccountJSON((*buf)[:0], (*gen.Account)(&a)))
}

// appendAccountJSON appends a as json.Marshal writes it (the fields in gen.Account's order, which
// is its JSON's). Nothing in an account makes json.Marshal fail: it has no time and no email type.
func appendAccountJSON(b []byte, a *gen.Account) []byte {
	opt := func(b []byte, name string, s *string) []byte {
		b = append(b, `,"`...)
		b = append(b, name...)
		b = append(b, `":`...)
		return kit.AppendJSONOptString(b, s)
	}
	b = append(b, `{"brand_name":`...)
	b = kit.AppendJSONOptString(b, a.BrandName)
	b = append(b, `,"id":`...)
	b = kit.AppendJSONString(b, a.Id)
	b = append(b, `,"name":`...)
	b = kit.AppendJSONString(b, a.Name)
	o := &a.Organization
	ad := &o.Address
	b = append(b, `,"organization":{"address":{"country":`...)
	b = kit.AppendJSONOptString(b, ad.Country)
	b = opt(b, "line1", ad.Line1)
	b = opt(b, "line2", ad.Line2)
	b = opt(b, "locality", ad.Locality)
	b = opt(b, "name", ad.Name)
	b = opt(b, "postal_code", ad.PostalCode)
	b = opt(b, "region", ad.Region)
	c := &o.Contact
	b = append(b, `},"contact":{"email":`...)
	b = kit.AppendJSONOptString(b, c.Email)
	b = opt(b, "first_name", c.FirstName)
	b = opt(b, "last_name", c.LastName)
	b = opt(b, "phone_number", c.PhoneNumber)
	b = opt(b, "title", (*string)(c.Title))
	b = opt(b, "title_other", c.TitleOther)
	b = append(b, '}')
	b = opt(b, "country", o.Country)
	b = opt(b, "email", o.Email)
	b = opt(b, "identifier", o.Identifier)
	b = opt(b, "identifier_type", (*string)(o.IdentifierType))
	b = opt(b, "industry", (*string)(o.Industry))
	b = opt(b, "mobile_number", o.MobileNumber)
	b = append(b, `,"regions_of_operation":`...)
	switch regions := o.RegionsOfOperation; {
	case regions == nil || *regions == nil:
		b = append(b, "null"...)
	default:
		b = append(b, '[')
		for i, r := range *regions {
			if i > 0 {
				b = append(b, ',')
			}
			b = kit.AppendJSONString(b, string(r))
		}
		b = append(b, ']')
	}
	b = opt(b, "registered_name", o.RegisteredName)
	b = opt(b, "stock_exchange", (*string)(o.StockExchange))
	b = opt(b, "stock_symbol", o.StockSymbol)
	b = opt(b, "type", (*string)(o.Type))
	b = opt(b, "website", o.Website)
	b = append(b, `},"quiet_hours":{"enabled":`...)
	b = strconv.AppendBool(b, a.QuietHours.Enabled)
	b = append(b, `,"end":`...)
	b = kit.AppendJSONString(b, a.QuietHours.End)
	b = append(b, `,"start":`...)
	b = kit.AppendJSONString(b, a.QuietHours.Start)
	b = append(b, '}')
	b = opt(b, "time_zone", a.TimeZone)
	return append(b, '}')
}
