package twiliotest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// The fake's A2P 10DLC and toll-free registration: TrustHub customer profiles and trust products
// with their end users, supporting documents and assignments (and the 2010 API's addresses),
// Messaging v1's brand registrations, Messaging Services with their numbers, US A2P compliance
// registrations and toll-free verifications. Every request is checked against Endpoints, whose
// fields are those of Twilio's published OpenAPI descriptions (twilio/twilio-oai,
// spec/json/twilio_{api_v2010,messaging_v1,trusthub_v1}.json; oas_test.go compares them).
//
// Reviews follow Twilio's states and take ReviewDelay, checked whenever a request arrives:
//
//   - customer profiles and trust products: draft, then pending-review when submitted (an
//     evaluation must have been compliant), then twilio-approved; TrustHub's status callback is
//     posted on each change;
//   - brand registrations: PENDING, then APPROVED once both bundles are approved (FAILED when the
//     customer profile's business name contains RejectWord);
//   - US A2P registrations: IN_PROGRESS, then VERIFIED (FAILED, with errors, when the description
//     contains RejectWord; kept IN_PROGRESS while it contains HoldWord);
//   - toll-free verifications: PENDING_REVIEW, IN_REVIEW, then TWILIO_APPROVED (TWILIO_REJECTED
//     with rejection reasons for RejectWord); a rejected one can be edited, and is then reviewed
//     again.

// Words in a submission that make the fake's reviews decide as a test wants.
const (
	RejectWord = "REJECTME"
	HoldWord   = "HOLDME"
)

// Endpoint is a resource operation the fake serves, with the form fields Twilio's OpenAPI
// description declares for it: those the fake requires and those it also accepts. Any other
// field is a violation, and so is a missing required one.
type Endpoint struct {
	Method string
	// Path is the path as the OpenAPI description writes it, such as /v1/Services/{ServiceSid}.
	Path string
	// API names the description: api_v2010, messaging_v1 or trusthub_v1.
	API                string
	Required, Optional []string
	re                 *regexp.Regexp
	serve              func(f *Fake, w http.ResponseWriter, r *http.Request, ids []string)
}

// Endpoints are the registration operations the fake serves.
var Endpoints = []*Endpoint{
	{Method: http.MethodPost, Path: "/v1/CustomerProfiles", API: "trusthub_v1", Required: []string{"FriendlyName", "Email", "PolicySid"},
		Optional: []string{"StatusCallback"}, serve: func(f *Fake, w http.ResponseWriter, r *http.Request, _ []string) {
			f.createBundle(w, r, "customer_profile")
		}},
	{Method: http.MethodPost, Path: "/v1/CustomerProfiles/{Sid}", API: "trusthub_v1", Optional: []string{"Status", "StatusCallback", "FriendlyName", "Email"},
		serve: func(f *Fake, w http.ResponseWriter, r *http.Request, ids []string) { f.updateBundle(w, r, ids[0]) }},
	{Method: http.MethodGet, Path: "/v1/CustomerProfiles/{Sid}", API: "trusthub_v1",
		serve: func(f *Fake, w http.ResponseWriter, _ *http.Request, ids []string) { f.getBundle(w, ids[0]) }},
	{Method: http.MethodPost, Path: "/v1/CustomerProfiles/{CustomerProfileSid}/EntityAssignments", API: "trusthub_v1", Required: []string{"ObjectSid"},
		serve: func(f *Fake, w http.ResponseWriter, r *http.Request, ids []string) { f.assign(w, r, ids[0]) }},
	{Method: http.MethodPost, Path: "/v1/CustomerProfiles/{CustomerProfileSid}/Evaluations", API: "trusthub_v1", Required: []string{"PolicySid"},
		serve: func(f *Fake, w http.ResponseWriter, r *http.Request, ids []string) { f.evaluate(w, r, ids[0]) }},
	{Method: http.MethodPost, Path: "/v1/TrustProducts", API: "trusthub_v1", Required: []string{"FriendlyName", "Email", "PolicySid"},
		Optional: []string{"StatusCallback"}, serve: func(f *Fake, w http.ResponseWriter, r *http.Request, _ []string) {
			f.createBundle(w, r, "trust_product")
		}},
	{Method: http.MethodPost, Path: "/v1/TrustProducts/{Sid}", API: "trusthub_v1", Optional: []string{"Status", "StatusCallback", "FriendlyName", "Email"},
		serve: func(f *Fake, w http.ResponseWriter, r *http.Request, ids []string) { f.updateBundle(w, r, ids[0]) }},
	{Method: http.MethodGet, Path: "/v1/TrustProducts/{Sid}", API: "trusthub_v1",
		serve: func(f *Fake, w http.ResponseWriter, _ *http.Request, ids []string) { f.getBundle(w, ids[0]) }},
	{Method: http.MethodPost, Path: "/v1/TrustProducts/{TrustProductSid}/EntityAssignments", API: "trusthub_v1", Required: []string{"ObjectSid"},
		serve: func(f *Fake, w http.ResponseWriter, r *http.Request, ids []string) { f.assign(w, r, ids[0]) }},
	{Method: http.MethodPost, Path: "/v1/TrustProducts/{TrustProductSid}/Evaluations", API: "trusthub_v1", Required: []string{"PolicySid"},
		serve: func(f *Fake, w http.ResponseWriter, r *http.Request, ids []string) { f.evaluate(w, r, ids[0]) }},
	{Method: http.MethodPost, Path: "/v1/EndUsers", API: "trusthub_v1", Required: []string{"FriendlyName", "Type", "Attributes"},
		serve: func(f *Fake, w http.ResponseWriter, r *http.Request, _ []string) {
			f.createEntity(w, r, "IT", endUserTypes)
		}},
	{Method: http.MethodPost, Path: "/v1/SupportingDocuments", API: "trusthub_v1", Required: []string{"FriendlyName", "Type", "Attributes"},
		serve: func(f *Fake, w http.ResponseWriter, r *http.Request, _ []string) {
			f.createEntity(w, r, "RD", documentTypes)
		}},
	{Method: http.MethodPost, Path: "/2010-04-01/Accounts/{AccountSid}/Addresses.json", API: "api_v2010",
		Required: []string{"CustomerName", "Street", "City", "Region", "PostalCode", "IsoCountry"},
		Optional: []string{"FriendlyName", "StreetSecondary"}, serve: func(f *Fake, w http.ResponseWriter, r *http.Request, _ []string) {
			f.createAddress(w, r)
		}},
	{Method: http.MethodPost, Path: "/v1/a2p/BrandRegistrations", API: "messaging_v1", Required: []string{"CustomerProfileBundleSid", "A2PProfileBundleSid"},
		Optional: []string{"BrandType"}, serve: func(f *Fake, w http.ResponseWriter, r *http.Request, _ []string) { f.createBrand(w, r) }},
	{Method: http.MethodGet, Path: "/v1/a2p/BrandRegistrations/{Sid}", API: "messaging_v1",
		serve: func(f *Fake, w http.ResponseWriter, _ *http.Request, ids []string) { f.getBrand(w, ids[0]) }},
	{Method: http.MethodPost, Path: "/v1/Services", API: "messaging_v1", Required: []string{"FriendlyName"},
		Optional: []string{"UseInboundWebhookOnNumber"}, serve: func(f *Fake, w http.ResponseWriter, r *http.Request, _ []string) {
			f.createService(w, r)
		}},
	{Method: http.MethodPost, Path: "/v1/Services/{ServiceSid}/PhoneNumbers", API: "messaging_v1", Required: []string{"PhoneNumberSid"},
		serve: func(f *Fake, w http.ResponseWriter, r *http.Request, ids []string) { f.addServiceNumber(w, r, ids[0]) }},
	{Method: http.MethodDelete, Path: "/v1/Services/{ServiceSid}/PhoneNumbers/{Sid}", API: "messaging_v1",
		serve: func(f *Fake, w http.ResponseWriter, _ *http.Request, ids []string) {
			f.removeServiceNumber(w, ids[0], ids[1])
		}},
	{Method: http.MethodPost, Path: "/v1/Services/{MessagingServiceSid}/Compliance/Usa2p", API: "messaging_v1",
		Required: []string{"BrandRegistrationSid", "Description", "MessageFlow", "MessageSamples", "UsAppToPersonUsecase",
			"HasEmbeddedLinks", "HasEmbeddedPhone"},
		Optional: []string{"OptInMessage", "OptOutMessage", "HelpMessage", "OptInKeywords", "OptOutKeywords", "HelpKeywords",
			"SubscriberOptIn", "AgeGated", "DirectLending", "PrivacyPolicyUrl", "TermsAndConditionsUrl"},
		serve: func(f *Fake, w http.ResponseWriter, r *http.Request, ids []string) { f.createUsa2p(w, r, ids[0]) }},
	{Method: http.MethodPost, Path: "/v1/Services/{MessagingServiceSid}/Compliance/Usa2p/{Sid}", API: "messaging_v1",
		Required: []string{"HasEmbeddedLinks", "HasEmbeddedPhone", "MessageSamples", "MessageFlow", "Description", "AgeGated", "DirectLending"},
		Optional: []string{"PrivacyPolicyUrl", "TermsAndConditionsUrl"},
		serve: func(f *Fake, w http.ResponseWriter, r *http.Request, ids []string) {
			f.updateUsa2p(w, r, ids[0], ids[1])
		}},
	{Method: http.MethodGet, Path: "/v1/Services/{MessagingServiceSid}/Compliance/Usa2p/{Sid}", API: "messaging_v1",
		serve: func(f *Fake, w http.ResponseWriter, _ *http.Request, ids []string) { f.getUsa2p(w, ids[0], ids[1]) }},
	{Method: http.MethodDelete, Path: "/v1/Services/{MessagingServiceSid}/Compliance/Usa2p/{Sid}", API: "messaging_v1",
		serve: func(f *Fake, w http.ResponseWriter, _ *http.Request, ids []string) { f.deleteUsa2p(w, ids[0], ids[1]) }},
	{Method: http.MethodPost, Path: "/v1/Tollfree/Verifications", API: "messaging_v1",
		Required: []string{"BusinessName", "BusinessWebsite", "NotificationEmail", "UseCaseCategories", "UseCaseSummary",
			"ProductionMessageSample", "OptInImageUrls", "OptInType", "MessageVolume", "TollfreePhoneNumberSid"},
		Optional: tollFreeOptional, serve: func(f *Fake, w http.ResponseWriter, r *http.Request, _ []string) { f.createTollFree(w, r) }},
	{Method: http.MethodPost, Path: "/v1/Tollfree/Verifications/{Sid}", API: "messaging_v1",
		Optional: append(slices.Clone(tollFreeEditable), "EditReason"),
		serve:    func(f *Fake, w http.ResponseWriter, r *http.Request, ids []string) { f.editTollFree(w, r, ids[0]) }},
	{Method: http.MethodGet, Path: "/v1/Tollfree/Verifications/{Sid}", API: "messaging_v1",
		serve: func(f *Fake, w http.ResponseWriter, _ *http.Request, ids []string) { f.getTollFree(w, ids[0]) }},
	{Method: http.MethodDelete, Path: "/v1/Tollfree/Verifications/{Sid}", API: "messaging_v1",
		serve: func(f *Fake, w http.ResponseWriter, _ *http.Request, ids []string) { f.deleteTollFree(w, ids[0]) }},
}

// tollFreeEditable are the fields of a toll-free verification an edit may change.
var tollFreeEditable = []string{"BusinessName", "BusinessWebsite", "NotificationEmail", "UseCaseCategories", "UseCaseSummary",
	"ProductionMessageSample", "OptInImageUrls", "OptInType", "MessageVolume", "BusinessStreetAddress", "BusinessStreetAddress2",
	"BusinessCity", "BusinessStateProvinceRegion", "BusinessPostalCode", "BusinessCountry", "AdditionalInformation",
	"BusinessContactFirstName", "BusinessContactLastName", "BusinessContactEmail", "BusinessContactPhone",
	"BusinessRegistrationNumber", "BusinessRegistrationAuthority", "BusinessRegistrationCountry", "BusinessType",
	"DoingBusinessAs", "OptInConfirmationMessage", "HelpMessageSample", "PrivacyPolicyUrl", "TermsAndConditionsUrl", "AgeGatedContent"}

// tollFreeOptional are the optional fields of a new toll-free verification.
var tollFreeOptional = []string{"CustomerProfileSid", "BusinessStreetAddress", "BusinessStreetAddress2", "BusinessCity",
	"BusinessStateProvinceRegion", "BusinessPostalCode", "BusinessCountry", "AdditionalInformation", "BusinessContactFirstName",
	"BusinessContactLastName", "BusinessContactEmail", "BusinessContactPhone", "ExternalReferenceId", "BusinessRegistrationNumber",
	"BusinessRegistrationAuthority", "BusinessRegistrationCountry", "BusinessType", "DoingBusinessAs", "OptInConfirmationMessage",
	"HelpMessageSample", "PrivacyPolicyUrl", "TermsAndConditionsUrl", "AgeGatedContent"}

// Enumerations of Twilio's descriptions and guides that the fake checks.
var (
	policies      = map[string]string{"RNdfbf3fae0e1107f8aded0e7cead80bf5": "customer_profile", "RNb0d4771c2c98518d916a3d4cd70a8f8b": "trust_product"}
	endUserTypes  = map[string][]string{"customer_profile_business_information": {"business_name", "business_identity", "business_type", "business_industry", "business_registration_identifier", "business_registration_number", "business_regions_of_operation", "website_url"}, "authorized_representative_1": {"first_name", "last_name", "email", "phone_number", "business_title", "job_position"}, "us_a2p_messaging_profile_information": {"company_type"}}
	documentTypes = map[string][]string{"customer_profile_address": {"address_sids"}}
	// useCaseCategories is tollfree_verification_enum_use_case_categories.
	useCaseCategories = []string{"TWO_FACTOR_AUTHENTICATION", "ACCOUNT_NOTIFICATIONS", "CUSTOMER_CARE", "CHARITY_NONPROFIT",
		"DELIVERY_NOTIFICATIONS", "FRAUD_ALERT_MESSAGING", "EVENTS", "HIGHER_EDUCATION", "K12", "MARKETING",
		"POLLING_AND_VOTING_NON_POLITICAL", "POLITICAL_ELECTION_CAMPAIGNS", "PUBLIC_SERVICE_ANNOUNCEMENT", "SECURITY_ALERT"}
	optInTypes            = []string{"VERBAL", "WEB_FORM", "PAPER_FORM", "VIA_TEXT", "MOBILE_QR_CODE", "IMPORT", "IMPORT_PLEASE_REPLACE"}
	tollFreeBusinessTypes = []string{"PRIVATE_PROFIT", "PUBLIC_PROFIT", "SOLE_PROPRIETOR", "NON_PROFIT", "GOVERNMENT"}
	usa2pUseCases         = []string{"2FA", "ACCOUNT_NOTIFICATION", "CUSTOMER_CARE", "DELIVERY_NOTIFICATION", "FRAUD_ALERT", "HIGHER_EDUCATION",
		"LOW_VOLUME", "MARKETING", "MIXED", "POLLING_VOTING", "PUBLIC_SERVICE_ANNOUNCEMENT", "SECURITY_ALERT"}
	sidPattern = regexp.MustCompile(`^[A-Z]{2}[0-9a-f]{32}$`)
)

func init() {
	param := regexp.MustCompile(`\{[A-Za-z]+\}`)
	for _, e := range Endpoints {
		parts := param.Split(e.Path, -1)
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		e.re = regexp.MustCompile("^" + strings.Join(parts, `([A-Za-z0-9]+)`) + "$")
	}
}

// registry is the fake's registration state.
type registry struct {
	bundles  map[string]*Bundle
	entities map[string]string // sid -> type
	brands   map[string]*Brand
	services map[string]*Service
	usa2p    map[string]*Usa2p
	tollFree map[string]*TollFree
}

func newRegistry() registry {
	return registry{bundles: map[string]*Bundle{}, entities: map[string]string{}, brands: map[string]*Brand{},
		services: map[string]*Service{}, usa2p: map[string]*Usa2p{}, tollFree: map[string]*TollFree{}}
}

// Bundle is a TrustHub customer profile or trust product.
type Bundle struct {
	SID, Kind, FriendlyName, Email, PolicySID, Status, StatusCallback string
	Assigned                                                          []string
	Evaluated                                                         bool
	changed                                                           time.Time
	// BusinessName is the assigned business information's business_name.
	BusinessName string
}

// Brand is an A2P brand registration.
type Brand struct {
	SID, CustomerProfile, A2PProfile, Status, FailureReason string
	created                                                 time.Time
}

// Service is a Messaging Service with its numbers' sids.
type Service struct {
	SID, FriendlyName string
	Numbers           []string
}

// Usa2p is a US A2P compliance registration (a campaign).
type Usa2p struct {
	SID, Service, Brand, Status, Description, UseCase string
	Form                                              url.Values
	changed                                           time.Time
}

// TollFree is a toll-free verification.
type TollFree struct {
	SID, Number, Status, Summary, ExternalReferenceID string
	Form                                              url.Values
	changed                                           time.Time
}

// endpoint finds the registration operation that serves a request; nil when none does.
func endpoint(r *http.Request) (*Endpoint, []string) {
	for _, e := range Endpoints {
		if m := e.re.FindStringSubmatch(r.URL.Path); m != nil && e.Method == r.Method {
			return e, m[1:]
		}
	}
	return nil, nil
}

// serveRegistry checks a registration request's fields against its endpoint and serves it.
func (f *Fake) serveRegistry(w http.ResponseWriter, r *http.Request, e *Endpoint, ids []string) {
	for k := range r.PostForm {
		if !slices.Contains(e.Required, k) && !slices.Contains(e.Optional, k) {
			f.violate("%s %s: unknown parameter %s", r.Method, e.Path, k)
		}
	}
	for _, k := range e.Required {
		if len(r.PostForm[k]) == 0 || r.PostForm.Get(k) == "" {
			f.violate("%s %s: missing parameter %s", r.Method, e.Path, k)
		}
	}
	for i, id := range ids {
		if !sidPattern.MatchString(id) {
			f.violate("%s %s: path parameter %d %q is not a sid", r.Method, e.Path, i, id)
		}
	}
	if strings.Contains(e.Path, "{AccountSid}") && ids[0] != AccountSID {
		f.violate("%s %s: the path names another account", r.Method, e.Path)
	}
	f.tick()
	e.serve(f, w, r, ids)
}

// tick moves every review whose time has come, and posts TrustHub's status callbacks.
func (f *Fake) tick() {
	var callbacks []Callback
	f.mu.Lock()
	now := time.Now()
	due := func(t time.Time) bool { return now.Sub(t) >= f.ReviewDelay }
	for _, b := range f.reg.bundles {
		if b.Status == "pending-review" && due(b.changed) {
			b.Status, b.changed = "in-review", now
		} else if b.Status == "in-review" && due(b.changed) {
			b.Status, b.changed = "twilio-approved", now
		} else {
			continue
		}
		if b.StatusCallback != "" {
			callbacks = append(callbacks, Callback{URL: b.StatusCallback, Params: url.Values{"AccountSid": {AccountSID}, "BundleSid": {b.SID},
				"Status": {b.Status}}})
		}
	}
	for _, br := range f.reg.brands {
		cp, a2p := f.reg.bundles[br.CustomerProfile], f.reg.bundles[br.A2PProfile]
		if br.Status != "PENDING" || !due(br.created) || cp == nil || a2p == nil {
			continue
		}
		switch {
		case strings.Contains(cp.BusinessName, RejectWord):
			br.Status, br.FailureReason = "FAILED", "The business name could not be verified against the EIN"
		case cp.Status == "twilio-approved" && a2p.Status == "twilio-approved":
			br.Status = "APPROVED"
		}
	}
	for _, u := range f.reg.usa2p {
		if u.Status == "IN_PROGRESS" && due(u.changed) && !strings.Contains(u.Description, HoldWord) {
			u.Status = "VERIFIED"
			if strings.Contains(u.Description, RejectWord) {
				u.Status = "FAILED"
			}
		}
	}
	for _, t := range f.reg.tollFree {
		if t.Status == "PENDING_REVIEW" && due(t.changed) {
			t.Status, t.changed = "IN_REVIEW", now
		} else if t.Status == "IN_REVIEW" && due(t.changed) && !strings.Contains(t.Summary, HoldWord) {
			t.Status = "TWILIO_APPROVED"
			if strings.Contains(t.Summary, RejectWord) {
				t.Status = "TWILIO_REJECTED"
			}
		}
	}
	f.mu.Unlock()
	for _, cb := range callbacks {
		go f.Post(cb.URL, cb.Params)
	}
}

func (f *Fake) createBundle(w http.ResponseWriter, r *http.Request, kind string) {
	form := r.PostForm
	if policies[form.Get("PolicySid")] != kind {
		f.violate("POST %s: PolicySid %q is not the policy of a %s", r.URL.Path, form.Get("PolicySid"), kind)
	}
	f.checkURL(r, "StatusCallback")
	b := &Bundle{SID: sid("BU"), Kind: kind, FriendlyName: form.Get("FriendlyName"), Email: form.Get("Email"),
		PolicySID: form.Get("PolicySid"), Status: "draft", StatusCallback: form.Get("StatusCallback"), changed: time.Now()}
	f.mu.Lock()
	f.reg.bundles[b.SID] = b
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, bundleJSON(b))
}

func (f *Fake) updateBundle(w http.ResponseWriter, r *http.Request, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.reg.bundles[id]
	if b == nil {
		apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	}
	if st := r.PostForm.Get("Status"); st != "" {
		switch {
		case st != "pending-review":
			f.violate("POST %s: Status %q: only pending-review submits a bundle", r.URL.Path, st)
		case !b.Evaluated:
			apiError(w, http.StatusBadRequest, 22214, "The bundle has not been evaluated as compliant")
			return
		case b.Status == "draft":
			b.Status, b.changed = "pending-review", time.Now()
		}
	}
	writeJSON(w, http.StatusAccepted, bundleJSON(b))
}

func (f *Fake) getBundle(w http.ResponseWriter, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b := f.reg.bundles[id]; b != nil {
		writeJSON(w, http.StatusOK, bundleJSON(b))
		return
	}
	apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
}

func bundleJSON(b *Bundle) map[string]any {
	return map[string]any{"sid": b.SID, "account_sid": AccountSID, "policy_sid": b.PolicySID, "friendly_name": b.FriendlyName,
		"status": b.Status, "email": b.Email, "status_callback": nullable(b.StatusCallback), "valid_until": nil, "errors": nil}
}

func (f *Fake) assign(w http.ResponseWriter, r *http.Request, bundle string) {
	obj := r.PostForm.Get("ObjectSid")
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.reg.bundles[bundle]
	if b == nil {
		apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	}
	_, entity := f.reg.entities[obj]
	_, isBundle := f.reg.bundles[obj]
	if !entity && !isBundle && !strings.HasPrefix(obj, "BU") {
		apiError(w, http.StatusBadRequest, 20001, "ObjectSid is not an end user, supporting document or bundle of the account")
		return
	}
	if slices.Contains(b.Assigned, obj) {
		apiError(w, http.StatusBadRequest, 22206, "The object is assigned to the bundle already")
		return
	}
	b.Assigned = append(b.Assigned, obj)
	if name := f.businessNames[obj]; name != "" {
		b.BusinessName = name
	}
	writeJSON(w, http.StatusCreated, map[string]any{"sid": sid("BV"), "trust_product_sid": bundle, "customer_profile_sid": bundle,
		"account_sid": AccountSID, "object_sid": obj})
}

// required are the entity types each bundle's policy wants assigned before it is compliant.
var required = map[string][]string{
	"customer_profile": {"customer_profile_business_information", "authorized_representative_1", "customer_profile_address"},
	"trust_product":    {"us_a2p_messaging_profile_information", "customer_profile"},
}

func (f *Fake) evaluate(w http.ResponseWriter, r *http.Request, bundle string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.reg.bundles[bundle]
	if b == nil {
		apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	}
	if r.PostForm.Get("PolicySid") != b.PolicySID {
		f.violate("POST %s: PolicySid is not the bundle's policy", r.URL.Path)
	}
	var results []map[string]any
	status := "compliant"
	for _, want := range required[b.Kind] {
		found := false
		for _, obj := range b.Assigned {
			if f.reg.entities[obj] == want || (want == "customer_profile" && f.reg.bundles[obj] != nil && f.reg.bundles[obj].Kind == want) {
				found = true
			}
		}
		if !found {
			status = "noncompliant"
		}
		results = append(results, map[string]any{"friendly_name": want, "object_type": want, "passed": found,
			"failure_reason": map[bool]string{true: "", false: "Missing " + want}[found]})
	}
	b.Evaluated = status == "compliant"
	writeJSON(w, http.StatusCreated, map[string]any{"sid": sid("EL"), "account_sid": AccountSID, "policy_sid": b.PolicySID,
		"status": status, "results": results})
}

func (f *Fake) createEntity(w http.ResponseWriter, r *http.Request, prefix string, types map[string][]string) {
	typ := r.PostForm.Get("Type")
	keys, ok := types[typ]
	if !ok {
		f.violate("POST %s: Type %q is not one the registration uses", r.URL.Path, typ)
	}
	var attrs map[string]any
	if err := json.Unmarshal([]byte(r.PostForm.Get("Attributes")), &attrs); err != nil {
		f.violate("POST %s: Attributes is not a JSON object: %v", r.URL.Path, err)
	}
	for _, k := range keys {
		if v, _ := attrs[k].(string); v == "" {
			f.violate("POST %s: Attributes of %s lack %s", r.URL.Path, typ, k)
		}
	}
	if typ == "customer_profile_address" {
		if a, _ := attrs["address_sids"].(string); !strings.HasPrefix(a, "AD") {
			f.violate("POST %s: address_sids %q is not an address", r.URL.Path, a)
		}
	}
	id := sid(prefix)
	f.mu.Lock()
	f.reg.entities[id] = typ
	if name, _ := attrs["business_name"].(string); name != "" {
		f.businessNames[id] = name
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"sid": id, "account_sid": AccountSID, "friendly_name": r.PostForm.Get("FriendlyName"),
		"type": typ, "attributes": attrs})
}

func (f *Fake) createAddress(w http.ResponseWriter, r *http.Request) {
	id := sid("AD")
	f.mu.Lock()
	f.reg.entities[id] = "address"
	f.mu.Unlock()
	p := r.PostForm
	writeJSON(w, http.StatusCreated, map[string]any{"sid": id, "account_sid": AccountSID, "customer_name": p.Get("CustomerName"),
		"street": p.Get("Street"), "city": p.Get("City"), "region": p.Get("Region"), "postal_code": p.Get("PostalCode"),
		"iso_country": p.Get("IsoCountry"), "validated": true, "verified": false})
}

func (f *Fake) createBrand(w http.ResponseWriter, r *http.Request) {
	cp, a2p := r.PostForm.Get("CustomerProfileBundleSid"), r.PostForm.Get("A2PProfileBundleSid")
	f.mu.Lock()
	defer f.mu.Unlock()
	c, a := f.reg.bundles[cp], f.reg.bundles[a2p]
	if c == nil || c.Kind != "customer_profile" || a == nil || a.Kind != "trust_product" {
		apiError(w, http.StatusBadRequest, 20001, "CustomerProfileBundleSid or A2PProfileBundleSid is not a bundle of its kind")
		return
	}
	if c.Status == "draft" || a.Status == "draft" {
		apiError(w, http.StatusBadRequest, 20001, "The bundles must be submitted before the brand is registered")
		return
	}
	b := &Brand{SID: sid("BN"), CustomerProfile: cp, A2PProfile: a2p, Status: "PENDING", created: time.Now()}
	f.reg.brands[b.SID] = b
	writeJSON(w, http.StatusCreated, brandJSON(b))
}

func (f *Fake) getBrand(w http.ResponseWriter, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b := f.reg.brands[id]; b != nil {
		writeJSON(w, http.StatusOK, brandJSON(b))
		return
	}
	apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
}

func brandJSON(b *Brand) map[string]any {
	var errs []map[string]any
	if b.FailureReason != "" {
		errs = []map[string]any{{"code": 30795, "description": b.FailureReason}}
	}
	return map[string]any{"sid": b.SID, "account_sid": AccountSID, "customer_profile_bundle_sid": b.CustomerProfile,
		"a2p_profile_bundle_sid": b.A2PProfile, "brand_type": "STANDARD", "status": b.Status, "tcr_id": nil,
		"failure_reason": nullable(b.FailureReason), "errors": errs, "identity_status": "UNVERIFIED", "mock": false}
}

func (f *Fake) createService(w http.ResponseWriter, r *http.Request) {
	s := &Service{SID: sid("MG"), FriendlyName: r.PostForm.Get("FriendlyName")}
	f.mu.Lock()
	f.reg.services[s.SID] = s
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"sid": s.SID, "account_sid": AccountSID, "friendly_name": s.FriendlyName,
		"use_inbound_webhook_on_number": r.PostForm.Get("UseInboundWebhookOnNumber") == "true", "us_app_to_person_registered": false})
}

func (f *Fake) addServiceNumber(w http.ResponseWriter, r *http.Request, service string) {
	pn := r.PostForm.Get("PhoneNumberSid")
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.reg.services[service]
	var number string
	for n, in := range f.owned {
		if in.SID == pn {
			number = n
		}
	}
	switch {
	case s == nil || number == "":
		apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	case slices.Contains(s.Numbers, pn):
		apiError(w, http.StatusConflict, 21710, "Phone Number is already in the Messaging Service")
		return
	}
	for _, other := range f.reg.services {
		if slices.Contains(other.Numbers, pn) {
			apiError(w, http.StatusBadRequest, 21712, "Phone Number is already in another Messaging Service")
			return
		}
	}
	s.Numbers = append(s.Numbers, pn)
	writeJSON(w, http.StatusCreated, map[string]any{"sid": pn, "account_sid": AccountSID, "service_sid": service,
		"phone_number": number, "country_code": "US", "capabilities": []string{"SMS", "MMS"}})
}

func (f *Fake) removeServiceNumber(w http.ResponseWriter, service, pn string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.reg.services[service]
	if s == nil || !slices.Contains(s.Numbers, pn) {
		apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	}
	s.Numbers = slices.DeleteFunc(s.Numbers, func(n string) bool { return n == pn })
	w.WriteHeader(http.StatusNoContent)
}

// checkBools records a violation for fields that are not true or false.
func (f *Fake) checkBools(r *http.Request, keys ...string) {
	for _, k := range keys {
		if v := r.PostForm.Get(k); v != "" && v != "true" && v != "false" {
			f.violate("%s %s: %s %q is not a boolean", r.Method, r.URL.Path, k, v)
		}
	}
}

// checkURL records a violation for a field that is not an absolute URL.
func (f *Fake) checkURL(r *http.Request, keys ...string) {
	for _, k := range keys {
		for _, v := range r.PostForm[k] {
			if u, err := url.Parse(v); err != nil || !u.IsAbs() {
				f.violate("%s %s: %s %q is not an absolute URL", r.Method, r.URL.Path, k, v)
			}
		}
	}
}

// checkEnum records a violation for values of a field outside allowed.
func (f *Fake) checkEnum(r *http.Request, key string, allowed []string) {
	for _, v := range r.PostForm[key] {
		if !slices.Contains(allowed, v) {
			f.violate("%s %s: %s %q is not one of %v", r.Method, r.URL.Path, key, v, allowed)
		}
	}
}

func (f *Fake) createUsa2p(w http.ResponseWriter, r *http.Request, service string) {
	p := r.PostForm
	f.checkBools(r, "HasEmbeddedLinks", "HasEmbeddedPhone", "SubscriberOptIn", "AgeGated", "DirectLending")
	f.checkURL(r, "PrivacyPolicyUrl", "TermsAndConditionsUrl")
	f.checkEnum(r, "UsAppToPersonUsecase", usa2pUseCases)
	if n := len(p["MessageSamples"]); n < 2 || n > 5 {
		f.violate("POST %s: %d MessageSamples; Twilio takes 2 to 5", r.URL.Path, n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.reg.brands[p.Get("BrandRegistrationSid")]
	switch {
	case f.reg.services[service] == nil:
		apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	case b == nil || b.Status != "APPROVED":
		apiError(w, http.StatusBadRequest, 21711, "The brand registration is not approved")
		return
	}
	for _, u := range f.reg.usa2p {
		if u.Service == service {
			apiError(w, http.StatusConflict, 21713, "The Messaging Service has a US A2P registration already")
			return
		}
	}
	u := &Usa2p{SID: sid("QE"), Service: service, Brand: b.SID, Status: "IN_PROGRESS", Description: p.Get("Description"),
		UseCase: p.Get("UsAppToPersonUsecase"), Form: p, changed: time.Now()}
	f.reg.usa2p[u.SID] = u
	writeJSON(w, http.StatusCreated, usa2pJSON(u))
}

func (f *Fake) updateUsa2p(w http.ResponseWriter, r *http.Request, service, id string) {
	f.checkBools(r, "HasEmbeddedLinks", "HasEmbeddedPhone", "AgeGated", "DirectLending")
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.reg.usa2p[id]
	if u == nil || u.Service != service {
		apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	}
	u.Description, u.Status, u.changed = r.PostForm.Get("Description"), "IN_PROGRESS", time.Now()
	writeJSON(w, http.StatusOK, usa2pJSON(u))
}

func (f *Fake) getUsa2p(w http.ResponseWriter, service, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u := f.reg.usa2p[id]; u != nil && u.Service == service {
		writeJSON(w, http.StatusOK, usa2pJSON(u))
		return
	}
	apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
}

func (f *Fake) deleteUsa2p(w http.ResponseWriter, service, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u := f.reg.usa2p[id]; u != nil && u.Service == service {
		delete(f.reg.usa2p, id)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
}

func usa2pJSON(u *Usa2p) map[string]any {
	var errs []map[string]any
	if u.Status == "FAILED" {
		errs = []map[string]any{{"code": 30896, "description": "The campaign's message samples do not match its description"}}
	}
	return map[string]any{"sid": u.SID, "account_sid": AccountSID, "brand_registration_sid": u.Brand, "messaging_service_sid": u.Service,
		"description": u.Description, "us_app_to_person_usecase": u.UseCase, "campaign_status": u.Status, "campaign_id": nil,
		"errors": errs, "mock": false}
}

func (f *Fake) checkTollFree(r *http.Request) {
	f.checkEnum(r, "UseCaseCategories", useCaseCategories)
	f.checkEnum(r, "OptInType", optInTypes)
	f.checkEnum(r, "BusinessType", tollFreeBusinessTypes)
	f.checkEnum(r, "BusinessRegistrationAuthority", []string{"EIN", "CBN", "CRN", "PROVINCIAL_NUMBER", "VAT", "ACN", "ABN", "BRN",
		"SIREN", "SIRET", "NZBN", "USt-IdNr", "CIF", "NIF", "CNPJ", "UID", "NEQ", "OTHER"})
	f.checkBools(r, "AgeGatedContent")
	f.checkURL(r, "OptInImageUrls")
	if v := r.PostForm.Get("BusinessContactPhone"); v != "" && !e164.MatchString(v) {
		f.violate("%s %s: BusinessContactPhone %q is not E.164", r.Method, r.URL.Path, v)
	}
}

func (f *Fake) createTollFree(w http.ResponseWriter, r *http.Request) {
	f.checkTollFree(r)
	pn := r.PostForm.Get("TollfreePhoneNumberSid")
	f.mu.Lock()
	defer f.mu.Unlock()
	var number string
	for n, in := range f.owned {
		if in.SID == pn {
			number = n
		}
	}
	if number == "" {
		apiError(w, http.StatusBadRequest, 20001, "TollfreePhoneNumberSid is not a number of the account")
		return
	}
	for _, t := range f.reg.tollFree {
		if t.Number == number && t.Status != "TWILIO_REJECTED" {
			apiError(w, http.StatusConflict, 30400, "The toll-free number has a verification already")
			return
		}
	}
	t := &TollFree{SID: sid("HH"), Number: number, Status: "PENDING_REVIEW", Summary: r.PostForm.Get("UseCaseSummary"),
		ExternalReferenceID: r.PostForm.Get("ExternalReferenceId"), Form: r.PostForm, changed: time.Now()}
	f.reg.tollFree[t.SID] = t
	writeJSON(w, http.StatusCreated, tollFreeJSON(t, pn))
}

func (f *Fake) editTollFree(w http.ResponseWriter, r *http.Request, id string) {
	f.checkTollFree(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.reg.tollFree[id]
	switch {
	case t == nil:
		apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	case t.Status != "TWILIO_REJECTED":
		apiError(w, http.StatusBadRequest, 30445, "Only a rejected verification can be edited")
		return
	}
	if v := r.PostForm.Get("UseCaseSummary"); v != "" {
		t.Summary = v
	}
	t.Status, t.changed = "PENDING_REVIEW", time.Now()
	writeJSON(w, http.StatusOK, tollFreeJSON(t, ""))
}

func (f *Fake) getTollFree(w http.ResponseWriter, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t := f.reg.tollFree[id]; t != nil {
		writeJSON(w, http.StatusOK, tollFreeJSON(t, ""))
		return
	}
	apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
}

func (f *Fake) deleteTollFree(w http.ResponseWriter, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reg.tollFree[id] == nil {
		apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	}
	delete(f.reg.tollFree, id)
	w.WriteHeader(http.StatusNoContent)
}

func tollFreeJSON(t *TollFree, pn string) map[string]any {
	out := map[string]any{"sid": t.SID, "account_sid": AccountSID, "status": t.Status, "tollfree_phone_number": t.Number,
		"use_case_summary": t.Summary, "external_reference_id": nullable(t.ExternalReferenceID), "rejection_reason": nil,
		"error_code": nil, "rejection_reasons": nil, "edit_allowed": t.Status == "TWILIO_REJECTED"}
	if pn != "" {
		out["tollfree_phone_number_sid"] = pn
	}
	if t.Status == "TWILIO_REJECTED" {
		out["rejection_reason"], out["error_code"] = "Opt-in information is not clear", 30509
		out["rejection_reasons"] = []map[string]any{{"code": 30509, "reason": "Opt-in information is not clear"}}
	}
	return out
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Registered reports whether the fake holds a US A2P registration or toll-free verification
// made for reference (a toll-free verification by its ExternalReferenceId; a registration by the
// sid the adapter recorded, which specs pass as reference when they have it).
func (f *Fake) Registered(sidOrReference string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reg.usa2p[sidOrReference] != nil || f.reg.tollFree[sidOrReference] != nil {
		return true
	}
	for _, t := range f.reg.tollFree {
		if t.ExternalReferenceID == sidOrReference {
			return true
		}
	}
	return false
}

// ServiceNumbers lists the phone numbers of each Messaging Service, by service sid.
func (f *Fake) ServiceNumbers() map[string][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]string{}
	for _, s := range f.reg.services {
		for _, pn := range s.Numbers {
			for n, in := range f.owned {
				if in.SID == pn {
					out[s.SID] = append(out[s.SID], n)
				}
			}
		}
		sort.Strings(out[s.SID])
	}
	return out
}

// Counts says how many resources of each kind the fake holds, for specs that check nothing is
// made twice.
func (f *Fake) Counts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return map[string]int{"bundles": len(f.reg.bundles), "brands": len(f.reg.brands), "services": len(f.reg.services),
		"usa2p": len(f.reg.usa2p), "tollfree": len(f.reg.tollFree)}
}
