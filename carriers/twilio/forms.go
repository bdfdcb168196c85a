package twilio

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboard/switchboard/carriers"
)

// How the contract's brand and campaign values become Twilio's. TrustHub's attribute values are
// those of its A2P 10DLC guide for ISVs ("Gather business information"); Messaging v1's are those
// of its OpenAPI description.

// businessTypes maps the contract's organization types to TrustHub's business_type.
var businessTypes = map[string]string{
	"sole_proprietor":     "Sole Proprietorship",
	"partnership":         "Partnership",
	"llc":                 "Limited Liability Corporation",
	"co_op":               "Co-operative",
	"non_profit":          "Non-profit Corporation",
	"private_corporation": "Corporation",
	"public_corporation":  "Corporation",
	"government":          "Corporation",
}

// companyTypes maps organization types to the A2P messaging profile's company_type.
var companyTypes = map[string]string{
	"public_corporation": "public",
	"non_profit":         "non-profit",
	"government":         "government",
}

// industries maps the contract's industries to TrustHub's business_industry; the contract's
// construction and professional_services have none there.
var industries = func() map[string]string {
	m := map[string]string{}
	for _, i := range []string{"agriculture", "automotive", "banking", "consumer", "education", "electronics", "energy", "engineering",
		"fast_moving_consumer_goods", "financial", "fintech", "food_and_beverage", "government", "healthcare", "hospitality",
		"insurance", "jewelry", "legal", "manufacturing", "media", "not_for_profit", "oil_and_gas", "online", "raw_materials",
		"real_estate", "religion", "retail", "technology", "telecommunications", "transportation", "travel"} {
		m[i] = strings.ToUpper(i)
	}
	return m
}()

// jobPositions maps the contract's contact titles to the authorized representative's job_position.
var jobPositions = map[string]string{
	"ceo": "CEO", "cfo": "CFO", "director": "Director", "gm": "GM", "vp": "VP", "general_counsel": "General Counsel", "other": "Other",
}

// usa2pUseCases maps the contract's 10DLC use cases to Twilio's UsAppToPersonUsecase.
var usa2pUseCases = map[string]string{
	"two_factor_authentication": "2FA", "account_notification": "ACCOUNT_NOTIFICATION", "customer_care": "CUSTOMER_CARE",
	"delivery_notification": "DELIVERY_NOTIFICATION", "fraud_alert": "FRAUD_ALERT", "higher_education": "HIGHER_EDUCATION",
	"marketing": "MARKETING", "polling_voting": "POLLING_VOTING", "public_service_announcement": "PUBLIC_SERVICE_ANNOUNCEMENT",
	"security_alert": "SECURITY_ALERT",
}

// tollFreeUseCases maps the contract's toll-free use cases to Twilio's UseCaseCategories.
var tollFreeUseCases = map[string]string{
	"two_factor_authentication": "TWO_FACTOR_AUTHENTICATION", "account_notification": "ACCOUNT_NOTIFICATIONS",
	"customer_care": "CUSTOMER_CARE", "charity": "CHARITY_NONPROFIT", "delivery_notification": "DELIVERY_NOTIFICATIONS",
	"fraud_alert": "FRAUD_ALERT_MESSAGING", "event": "EVENTS", "higher_education": "HIGHER_EDUCATION", "k12_education": "K12",
	"marketing": "MARKETING", "polling_voting": "POLLING_AND_VOTING_NON_POLITICAL", "political": "POLITICAL_ELECTION_CAMPAIGNS",
	"public_service_announcement": "PUBLIC_SERVICE_ANNOUNCEMENT", "security_alert": "SECURITY_ALERT",
}

// tollFreeBusinessTypes maps organization types to the toll-free verification's BusinessType.
var tollFreeBusinessTypes = map[string]string{
	"sole_proprietor": "SOLE_PROPRIETOR", "partnership": "PRIVATE_PROFIT", "llc": "PRIVATE_PROFIT", "co_op": "PRIVATE_PROFIT",
	"private_corporation": "PRIVATE_PROFIT", "public_corporation": "PUBLIC_PROFIT", "non_profit": "NON_PROFIT", "government": "GOVERNMENT",
}

// regions maps the contract's regions of operation to TrustHub's.
var regions = map[string]string{
	"usa_and_canada": "USA_AND_CANADA", "africa": "AFRICA", "asia": "ASIA", "australia": "AUSTRALIA", "europe": "EUROPE",
	"latin_america": "LATIN_AMERICA",
}

// defaultTollFreeVolume is the MessageVolume of a toll-free verification: the contract's toll-free
// campaign has no volume, so the adapter declares Twilio's "1,000" messages a month.
const defaultTollFreeVolume = "1,000"

// missingBrandFields names the organization fields Twilio needs to register a brand that the
// account has not given.
func missingBrandFields(b carriers.Brand) []string {
	var out []string
	for _, f := range []struct {
		name  string
		given bool
	}{
		{"registered_name", b.RegisteredName != ""}, {"type", businessTypes[b.Type] != ""}, {"industry", b.Industry != ""},
		{"identifier", b.Identifier != "" || b.Type == "sole_proprietor"}, {"website", b.Website != ""},
		{"email", b.Email != "" || b.Contact.Email != ""}, {"regions_of_operation", len(b.RegionsOfOperation) > 0},
		{"address.line1", b.Address.Line1 != ""}, {"address.locality", b.Address.Locality != ""},
		{"address.region", b.Address.Region != ""}, {"address.postal_code", b.Address.PostalCode != ""},
		{"address.country", b.Address.Country != ""}, {"contact.first_name", b.Contact.FirstName != ""},
		{"contact.last_name", b.Contact.LastName != ""}, {"contact.email", b.Contact.Email != ""},
		{"contact.phone_number", b.Contact.PhoneNumber != ""}, {"contact.title", b.Contact.Title != ""},
	} {
		if !f.given {
			out = append(out, f.name)
		}
	}
	return out
}

// jsonAttrs encodes a TrustHub resource's Attributes.
func jsonAttrs(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// businessInformation is the customer_profile_business_information end user's Attributes.
func businessInformation(b carriers.Brand) string {
	rs := make([]string, 0, len(b.RegionsOfOperation))
	for _, r := range b.RegionsOfOperation {
		rs = append(rs, regions[r])
	}
	identifier := "EIN"
	if b.Address.Country == "CA" {
		identifier = "CBN"
	}
	return jsonAttrs(map[string]any{
		"business_name": b.RegisteredName, "business_identity": "direct_customer", "business_type": businessTypes[b.Type],
		"business_industry": industries[b.Industry], "business_registration_identifier": identifier,
		"business_registration_number": b.Identifier, "business_regions_of_operation": strings.Join(rs, ","),
		"website_url": b.Website, "social_media_profile_urls": "",
	})
}

// representative is the authorized_representative_1 end user's Attributes.
func representative(b carriers.Brand) string {
	title := jobPositions[b.Contact.Title]
	businessTitle := title
	if b.Contact.Title == "other" && b.Contact.TitleOther != "" {
		businessTitle = b.Contact.TitleOther
	}
	return jsonAttrs(map[string]any{
		"first_name": b.Contact.FirstName, "last_name": b.Contact.LastName, "email": b.Contact.Email,
		"phone_number": b.Contact.PhoneNumber, "business_title": businessTitle, "job_position": title,
	})
}

// messagingProfile is the us_a2p_messaging_profile_information end user's Attributes.
func messagingProfile(b carriers.Brand) string {
	typ := companyTypes[b.Type]
	if typ == "" {
		typ = "private"
	}
	attrs := map[string]any{"company_type": typ}
	if typ == "public" {
		attrs["stock_exchange"], attrs["stock_ticker"] = strings.ToUpper(b.StockExchange), b.StockSymbol
	}
	return jsonAttrs(attrs)
}

// usa2pForm is the US A2P compliance registration of a campaign (brandSID "" for an update).
func usa2pForm(s carriers.CampaignSubmission, brandSID string) url.Values {
	useCase := "LOW_VOLUME"
	switch {
	case len(s.UseCases) == 1:
		useCase = usa2pUseCases[s.UseCases[0]]
	case s.Volume == "high":
		useCase = "MIXED"
	}
	f := url.Values{
		"Description": {s.Description}, "MessageFlow": {s.ConsentFlow}, "MessageSamples": s.MessageSamples,
		"UsAppToPersonUsecase": {useCase}, "HasEmbeddedLinks": {strconv.FormatBool(slices.Contains(s.Includes, "links"))},
		"HasEmbeddedPhone": {strconv.FormatBool(slices.Contains(s.Includes, "phone_numbers"))},
		"AgeGated":         {strconv.FormatBool(slices.Contains(s.Includes, "age_gated"))},
		"DirectLending":    {strconv.FormatBool(slices.Contains(s.Includes, "direct_lending"))},
		"OptInMessage":     {s.OptInMessage}, "OptOutMessage": {s.OptOutMessage}, "HelpMessage": {s.HelpMessage},
		"OptInKeywords": {"START", "UNSTOP", "YES"}, "OptOutKeywords": {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"},
		"HelpKeywords": {"HELP", "INFO"}, "SubscriberOptIn": {"true"},
	}
	if brandSID != "" {
		f.Set("BrandRegistrationSid", brandSID)
	}
	if s.PrivacyPolicyURL != "" {
		f.Set("PrivacyPolicyUrl", s.PrivacyPolicyURL)
	}
	if s.TermsAndConditionsURL != "" {
		f.Set("TermsAndConditionsUrl", s.TermsAndConditionsURL)
	}
	return f
}

// tollFreeForm is a toll-free verification, less the number's sid; missing names the brand
// fields Twilio needs that the account has not given.
func tollFreeForm(s carriers.TollFreeSubmission, email string) (url.Values, []string) {
	b := s.Brand
	var missing []string
	for _, f := range []struct {
		name  string
		given bool
	}{{"registered_name", b.RegisteredName != ""}, {"website", b.Website != ""}, {"email", email != ""}} {
		if !f.given {
			missing = append(missing, f.name)
		}
	}
	cats := make([]string, 0, len(s.UseCases))
	for _, u := range s.UseCases {
		cats = append(cats, tollFreeUseCases[u])
	}
	sample := strings.Join(s.MessageSamples, "\n")
	f := url.Values{
		"BusinessName": {b.RegisteredName}, "BusinessWebsite": {b.Website}, "NotificationEmail": {email},
		"UseCaseCategories": cats, "UseCaseSummary": {s.Description}, "ProductionMessageSample": {sample},
		// The contract's toll-free campaign has no picture of its opt-in: the business's website
		// stands for the web form where recipients opt in.
		"OptInImageUrls": {b.Website}, "OptInType": {"WEB_FORM"}, "MessageVolume": {defaultTollFreeVolume},
		"AgeGatedContent": {strconv.FormatBool(slices.Contains(s.Includes, "age_gated"))},
	}
	set := func(k, v string) {
		if v != "" {
			f.Set(k, v)
		}
	}
	a, ct := b.Address, b.Contact
	set("BusinessStreetAddress", a.Line1)
	set("BusinessStreetAddress2", a.Line2)
	set("BusinessCity", a.Locality)
	set("BusinessStateProvinceRegion", a.Region)
	set("BusinessPostalCode", a.PostalCode)
	set("BusinessCountry", a.Country)
	set("BusinessContactFirstName", ct.FirstName)
	set("BusinessContactLastName", ct.LastName)
	set("BusinessContactEmail", ct.Email)
	set("BusinessContactPhone", ct.PhoneNumber)
	set("BusinessRegistrationNumber", b.Identifier)
	if b.Identifier != "" {
		set("BusinessRegistrationAuthority", strings.ToUpper(b.IdentifierType))
		set("BusinessRegistrationCountry", a.Country)
	}
	set("BusinessType", tollFreeBusinessTypes[b.Type])
	set("DoingBusinessAs", b.Name)
	set("OptInConfirmationMessage", s.OptInMessage)
	set("HelpMessageSample", s.HelpMessage)
	set("PrivacyPolicyUrl", s.PrivacyPolicyURL)
	set("TermsAndConditionsUrl", s.TermsAndConditionsURL)
	return f, missing
}
