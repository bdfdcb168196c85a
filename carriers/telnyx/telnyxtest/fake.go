// Package telnyxtest is a fake Telnyx for tests: an HTTP server that speaks the part of Telnyx's
// API v2 the adapter uses (messages, available numbers, number orders, phone numbers, 10DLC brands,
// campaigns and number assignments, toll-free verification requests), checks every request (Bearer
// API key, JSON bodies without unknown fields, required fields), and sends webhooks signed with
// Ed25519 (telnyx-signature-ed25519 over timestamp|body, telnyx-timestamp) as Telnyx does:
// message.sent and message.finalized for a sent message, message.received for an inbound one with
// its media at presigned URLs. It is not a simulator for operators: carriers/sim is.
//
// Reviews take ReviewDelay, checked whenever a request arrives: a 10DLC campaign goes
// TCR_PENDING, TCR_ACCEPTED, then MNO_PROVISIONED (TCR_FAILED, with failure reasons, when its
// description contains RejectWord; kept TCR_PENDING while it contains HoldWord); a toll-free
// verification goes Waiting For Telnyx, In Progress, then Verified (Rejected, with a reason, for
// RejectWord).
package telnyxtest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard/switchboard/carriers/telnyx"
)

// Test credentials of the fake's account.
const (
	APIKey             = "KEYfake0000000000000000000000000000"
	MessagingProfileID = "40017f8e-49bd-4f16-9e3d-ef103f916228"
)

// Words in a submission that make the fake's reviews decide as a test wants.
const (
	RejectWord = "REJECTME"
	HoldWord   = "HOLDME"
)

// Fake is a fake Telnyx account.
type Fake struct {
	// URL is the fake API's base, for the adapter's APIBase.
	URL string
	// PublicKey is the account's Ed25519 public key (base64), for the adapter's PublicKey.
	PublicKey string
	// Webhooks receives the fake's webhooks (the installation's server, or the adapter's Handler).
	Webhooks http.Handler
	// StatusDelay is how long after accepting a message its webhooks are sent; ReviewDelay how
	// long each review step takes.
	StatusDelay, ReviewDelay time.Duration

	key ed25519.PrivateKey
	srv *httptest.Server

	mu         sync.Mutex
	violations []string
	messages   []Message
	failures   map[string]string
	owned      map[string]string // number -> phone number id
	media      map[string]File
	brands     map[string]map[string]any
	campaigns  map[string]*Campaign
	assigned   map[string]string // number -> campaign id
	tollFree   map[string]*TollFree
}

// Message is a message the fake accepted.
type Message struct {
	ID, From, To, Text, MessagingProfileID, WebhookURL string
	MediaURLs                                          []string
}

// File is a media file of an inbound message.
type File struct {
	ContentType string
	Data        []byte
}

// Campaign is a 10DLC campaign.
type Campaign struct {
	ID, BrandID, Status, Description string
	changed                          time.Time
}

// TollFree is a toll-free verification request.
type TollFree struct {
	ID, Number, Status, Summary string
	changed                     time.Time
}

// New starts a fake; Close stops it.
func New() *Fake {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	f := &Fake{PublicKey: base64.StdEncoding.EncodeToString(pub), key: priv, StatusDelay: 20 * time.Millisecond,
		ReviewDelay: 20 * time.Millisecond, failures: map[string]string{}, owned: map[string]string{}, media: map[string]File{},
		brands: map[string]map[string]any{}, campaigns: map[string]*Campaign{}, assigned: map[string]string{}, tollFree: map[string]*TollFree{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	f.URL = f.srv.URL
	return f
}

// Close stops the fake's server.
func (f *Fake) Close() { f.srv.Close() }

// FailTo makes messages to number fail (delivery_failed) with a Telnyx error code (40008, …).
func (f *Fake) FailTo(number, code string) { f.mu.Lock(); f.failures[number] = code; f.mu.Unlock() }

// Violations lists the requests that broke Telnyx's wire format.
func (f *Fake) Violations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.violations)
}

// MessagesTo lists the messages accepted to one handset.
func (f *Fake) MessagesTo(to string) []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Message
	for _, m := range f.messages {
		if m.To == to {
			out = append(out, m)
		}
	}
	return out
}

// Owned reports whether the account holds number.
func (f *Fake) Owned(number string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.owned[number] != ""
}

// Assigned returns the campaign a number is assigned to, "" when none.
func (f *Fake) Assigned(number string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.assigned[number]
}

// Registered reports whether the fake holds a campaign or toll-free verification with this id.
func (f *Fake) Registered(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.campaigns[id] != nil || f.tollFree[id] != nil
}

// Campaigns counts the 10DLC campaigns the fake holds.
func (f *Fake) Campaigns() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.campaigns)
}

func (f *Fake) violate(format string, args ...any) {
	f.mu.Lock()
	f.violations = append(f.violations, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

var (
	e164         = regexp.MustCompile(`^\+[1-9]\d{6,14}$`)
	phoneNumber  = regexp.MustCompile(`^/v2/phone_numbers/([0-9a-f-]+)$`)
	campaignPath = regexp.MustCompile(`^/v2/10dlc/campaign/([0-9A-Z]+)$`)
	assignPath   = regexp.MustCompile(`^/v2/10dlc/phone_number_campaigns/(\+\d+)$`)
	tollFreePath = regexp.MustCompile(`^/v2/messaging_tollfree/verification/requests/([0-9a-f-]+)$`)
	mediaPath    = regexp.MustCompile(`^/media/([0-9a-f]+)$`)
)

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if m := mediaPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodGet {
		f.serveMedia(w, r, m[1])
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+APIKey {
		f.violate("%s %s: no Bearer API key", r.Method, r.URL.Path)
		apiError(w, http.StatusUnauthorized, "10009", "Authentication failed")
		return
	}
	if r.Method == http.MethodPost && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		f.violate("%s %s: Content-Type %q is not JSON", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
	}
	f.tick()
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && p == "/v2/messages":
		f.send(w, r)
	case r.Method == http.MethodGet && p == "/v2/available_phone_numbers":
		f.available(w, r)
	case r.Method == http.MethodPost && p == "/v2/number_orders":
		f.order(w, r)
	case r.Method == http.MethodGet && p == "/v2/phone_numbers":
		f.listNumbers(w, r)
	case r.Method == http.MethodDelete && phoneNumber.MatchString(p):
		f.deleteNumber(w, phoneNumber.FindStringSubmatch(p)[1])
	case r.Method == http.MethodPost && p == "/v2/10dlc/brand":
		f.createBrand(w, r)
	case r.Method == http.MethodPost && p == "/v2/10dlc/campaignBuilder":
		f.createCampaign(w, r)
	case campaignPath.MatchString(p) && (r.Method == http.MethodGet || r.Method == http.MethodDelete):
		f.campaign(w, r, campaignPath.FindStringSubmatch(p)[1])
	case r.Method == http.MethodPost && p == "/v2/10dlc/phone_number_campaigns":
		f.assign(w, r)
	case r.Method == http.MethodDelete && assignPath.MatchString(p):
		f.unassign(w, assignPath.FindStringSubmatch(p)[1])
	case r.Method == http.MethodPost && p == "/v2/messaging_tollfree/verification/requests":
		f.createTollFree(w, r)
	case tollFreePath.MatchString(p) && (r.Method == http.MethodGet || r.Method == http.MethodDelete):
		f.tollFreeRequest(w, r, tollFreePath.FindStringSubmatch(p)[1])
	default:
		f.violate("%s %s: no such resource", r.Method, p)
		apiError(w, http.StatusNotFound, "10005", "Resource not found")
	}
}

// decode reads a JSON body into v, recording unknown fields and missing required ones.
func (f *Fake) decode(r *http.Request, v any, required ...string) map[string]any {
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(r.Body)
	dec := json.NewDecoder(bytes.NewReader(raw.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		f.violate("%s %s: %v", r.Method, r.URL.Path, err)
	}
	var m map[string]any
	_ = json.Unmarshal(raw.Bytes(), &m)
	for _, k := range required {
		if v, ok := m[k]; !ok || v == nil || v == "" {
			f.violate("%s %s: missing %s", r.Method, r.URL.Path, k)
		}
	}
	return m
}

// messageRequest is the body of POST /v2/messages.
type messageRequest struct {
	From               string   `json:"from"`
	To                 string   `json:"to"`
	Text               string   `json:"text"`
	MediaURLs          []string `json:"media_urls"`
	MessagingProfileID string   `json:"messaging_profile_id"`
	WebhookURL         string   `json:"webhook_url"`
	WebhookFailoverURL string   `json:"webhook_failover_url"`
	UseProfileWebhooks *bool    `json:"use_profile_webhooks"`
	Type               string   `json:"type"`
	Subject            string   `json:"subject"`
}

func (f *Fake) send(w http.ResponseWriter, r *http.Request) {
	var req messageRequest
	f.decode(r, &req, "to")
	if req.Text == "" && len(req.MediaURLs) == 0 {
		f.violate("POST /v2/messages: neither text nor media_urls")
	}
	if req.Type != "" && req.Type != "SMS" && req.Type != "MMS" {
		f.violate("POST /v2/messages: type %q is not SMS or MMS", req.Type)
	}
	if !e164.MatchString(req.To) {
		apiError(w, http.StatusUnprocessableEntity, "40310", "Invalid 'to' address")
		return
	}
	f.mu.Lock()
	_, held := f.owned[req.From]
	failure := f.failures[req.To]
	f.mu.Unlock()
	if !held {
		apiError(w, http.StatusUnprocessableEntity, "40305", "Invalid 'from' address")
		return
	}
	m := Message{ID: uuid(), From: req.From, To: req.To, Text: req.Text, MessagingProfileID: req.MessagingProfileID,
		WebhookURL: req.WebhookURL, MediaURLs: req.MediaURLs}
	f.mu.Lock()
	f.messages = append(f.messages, m)
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"data": f.messagePayload(m, "queued", "")})
	if m.WebhookURL == "" {
		return
	}
	go func() {
		time.Sleep(f.StatusDelay)
		f.Post(m.WebhookURL, "message.sent", f.messagePayload(m, "sent", ""))
		status := "delivered"
		if failure != "" {
			status = "delivery_failed"
		}
		f.Post(m.WebhookURL, "message.finalized", f.messagePayload(m, status, failure))
	}()
}

func (f *Fake) messagePayload(m Message, status, errCode string) map[string]any {
	media := []map[string]any{}
	for _, u := range m.MediaURLs {
		media = append(media, map[string]any{"url": u, "content_type": nil, "sha256": nil, "size": nil})
	}
	errs := []map[string]any{}
	if errCode != "" {
		errs = append(errs, map[string]any{"code": errCode, "title": "Message failed", "detail": "The fake failed it"})
	}
	typ := "SMS"
	if len(m.MediaURLs) > 0 {
		typ = "MMS"
	}
	return map[string]any{"record_type": "message", "direction": "outbound", "id": m.ID, "type": typ,
		"messaging_profile_id": m.MessagingProfileID, "from": map[string]any{"phone_number": m.From, "carrier": "Telnyx", "line_type": "VoIP"},
		"to":   []map[string]any{{"phone_number": m.To, "status": status, "carrier": "T-MOBILE USA, INC.", "line_type": "Wireless"}},
		"text": m.Text, "media": media, "webhook_url": m.WebhookURL, "encoding": "GSM-7", "parts": 1, "errors": errs}
}

// Post sends a signed webhook of an event to url, through Webhooks, and returns the status.
func (f *Fake) Post(url, eventType string, payload map[string]any) int {
	body, _ := json.Marshal(map[string]any{"data": map[string]any{"record_type": "event", "id": uuid(), "event_type": eventType,
		"occurred_at": time.Now().UTC().Format(time.RFC3339Nano), "payload": payload}, "meta": map[string]any{"attempt": 1, "delivered_to": url}})
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	return f.PostSigned(url, body, ts, base64.StdEncoding.EncodeToString(ed25519.Sign(f.key, append([]byte(ts+"|"), body...))))
}

// PostSigned sends a webhook body with the given timestamp and signature ("" for none).
func (f *Fake) PostSigned(url string, body []byte, timestamp, signature string) int {
	req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "telnyx-webhooks")
	if signature != "" {
		req.Header.Set(telnyx.SignatureHeader, signature)
		req.Header.Set(telnyx.TimestampHeader, timestamp)
	}
	rec := httptest.NewRecorder()
	f.Webhooks.ServeHTTP(rec, req)
	return rec.Code
}

// Inbound sends message.received from a handset to one of the account's numbers, with media
// files at presigned URLs of the fake, and returns the webhook's status and the message's id.
func (f *Fake) Inbound(webhookURL, from, to, text string, files ...File) (int, string, []string) {
	id := uuid()
	media := []map[string]any{}
	var urls []string
	for _, file := range files {
		h := strings.ReplaceAll(uuid(), "-", "")
		f.mu.Lock()
		f.media[h] = file
		f.mu.Unlock()
		// Telnyx's media is on a storage host of its own, by presigned URL: here localhost
		// instead of the API's 127.0.0.1.
		u := "http://" + strings.Replace(f.srv.Listener.Addr().String(), "127.0.0.1", "localhost", 1) + "/media/" + h
		urls = append(urls, u)
		media = append(media, map[string]any{"url": u, "content_type": file.ContentType, "sha256": nil, "size": len(file.Data)})
	}
	typ := "SMS"
	if len(files) > 0 {
		typ = "MMS"
	}
	payload := map[string]any{"record_type": "message", "direction": "inbound", "id": id, "type": typ,
		"messaging_profile_id": MessagingProfileID, "from": map[string]any{"phone_number": from, "carrier": "T-MOBILE USA, INC.", "line_type": "Wireless"},
		"to":   []map[string]any{{"phone_number": to, "status": "webhook_delivered", "carrier": "Telnyx", "line_type": "VoIP"}},
		"text": text, "media": media, "encoding": "GSM-7", "parts": 1, "received_at": time.Now().UTC().Format(time.RFC3339Nano)}
	return f.Post(webhookURL, "message.received", payload), id, urls
}

func (f *Fake) serveMedia(w http.ResponseWriter, r *http.Request, h string) {
	if r.Header.Get("Authorization") != "" {
		f.violate("GET %s: credentials sent for a presigned media URL", r.URL.Path)
	}
	f.mu.Lock()
	file, ok := f.media[h]
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", file.ContentType)
	_, _ = w.Write(file.Data)
}

// Inventory: local numbers +1 AAA 555 01XX for any area code (415 without one); toll-free
// +1 PPP 555 01XX for 800 and 833 to 888, the 800 ones first (Switchboard must leave them out).
var tollFreePrefixes = []string{"800", "833", "844", "855", "866", "877", "888"}

func (f *Fake) available(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k := range q {
		if !slices.Contains([]string{"filter[country_code]", "filter[phone_number_type]", "filter[national_destination_code]", "filter[limit]"}, k) {
			f.violate("GET /v2/available_phone_numbers: unknown parameter %s", k)
		}
	}
	typ := q.Get("filter[phone_number_type]")
	if typ != "local" && typ != "toll_free" {
		f.violate("GET /v2/available_phone_numbers: filter[phone_number_type] %q is not local or toll_free", typ)
	}
	limit, err := strconv.Atoi(q.Get("filter[limit]"))
	if err != nil || limit < 1 || limit > 100 {
		f.violate("GET /v2/available_phone_numbers: filter[limit] %q is not 1 to 100", q.Get("filter[limit]"))
		limit = 100
	}
	country := q.Get("filter[country_code]")
	prefixes := []string{q.Get("filter[national_destination_code]")}
	switch {
	case country != "US" && country != "CA":
		prefixes = nil
	case typ == "toll_free" && prefixes[0] == "":
		prefixes = tollFreePrefixes
	case typ == "local" && prefixes[0] == "":
		prefixes = []string{"415"}
	case typ == "toll_free" && !slices.Contains(tollFreePrefixes, prefixes[0]), typ == "local" && slices.Contains(tollFreePrefixes, prefixes[0]):
		prefixes = nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	list := []map[string]any{}
	for _, p := range prefixes {
		for i := 0; i < 100 && len(list) < limit; i++ {
			n := fmt.Sprintf("+1%s55501%02d", p, i)
			if f.owned[n] == "" {
				list = append(list, map[string]any{"record_type": "available_phone_number", "phone_number": n,
					"features": []map[string]string{{"name": "sms"}, {"name": "mms"}}})
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": list, "metadata": map[string]any{"total_results": len(list)}})
}

func (f *Fake) order(w http.ResponseWriter, r *http.Request) {
	var req struct {
		PhoneNumbers []struct {
			PhoneNumber string `json:"phone_number"`
		} `json:"phone_numbers"`
		MessagingProfileID string `json:"messaging_profile_id"`
		ConnectionID       string `json:"connection_id"`
		CustomerReference  string `json:"customer_reference"`
	}
	f.decode(r, &req, "phone_numbers")
	if req.MessagingProfileID != MessagingProfileID {
		f.violate("POST /v2/number_orders: messaging_profile_id %q is not the account's profile", req.MessagingProfileID)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, n := range req.PhoneNumbers {
		if !regexp.MustCompile(`^\+1[2-9]\d{2}55501\d{2}$`).MatchString(n.PhoneNumber) || f.owned[n.PhoneNumber] != "" {
			apiError(w, http.StatusUnprocessableEntity, "10015", "Phone number is not available")
			return
		}
	}
	for _, n := range req.PhoneNumbers {
		f.owned[n.PhoneNumber] = uuid()
		out = append(out, map[string]any{"id": uuid(), "phone_number": n.PhoneNumber, "status": "success"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"id": uuid(), "record_type": "number_order", "status": "success",
		"phone_numbers": out, "messaging_profile_id": req.MessagingProfileID}})
}

func (f *Fake) listNumbers(w http.ResponseWriter, r *http.Request) {
	want := r.URL.Query().Get("filter[phone_number]")
	f.mu.Lock()
	defer f.mu.Unlock()
	list := []map[string]any{}
	for n, id := range f.owned {
		if want == "" || n == want {
			list = append(list, map[string]any{"id": id, "record_type": "phone_number", "phone_number": n,
				"messaging_profile_id": MessagingProfileID, "status": "active"})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": list})
}

func (f *Fake) deleteNumber(w http.ResponseWriter, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for n, nid := range f.owned {
		if nid == id {
			delete(f.owned, n)
			delete(f.assigned, n)
			writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"id": id, "phone_number": n, "status": "deleted"}})
			return
		}
	}
	apiError(w, http.StatusNotFound, "10005", "Resource not found")
}

// brandRequest is the body of POST /v2/10dlc/brand.
type brandRequest struct {
	EntityType    string `json:"entityType"`
	DisplayName   string `json:"displayName"`
	CompanyName   string `json:"companyName"`
	FirstName     string `json:"firstName"`
	LastName      string `json:"lastName"`
	EIN           string `json:"ein"`
	Phone         string `json:"phone"`
	Street        string `json:"street"`
	City          string `json:"city"`
	State         string `json:"state"`
	PostalCode    string `json:"postalCode"`
	Country       string `json:"country"`
	Email         string `json:"email"`
	StockSymbol   string `json:"stockSymbol"`
	StockExchange string `json:"stockExchange"`
	Website       string `json:"website"`
	Vertical      string `json:"vertical"`
}

func (f *Fake) createBrand(w http.ResponseWriter, r *http.Request) {
	var req brandRequest
	m := f.decode(r, &req, "entityType", "displayName", "country", "email", "vertical")
	if !slices.Contains([]string{"PRIVATE_PROFIT", "PUBLIC_PROFIT", "NON_PROFIT", "GOVERNMENT", "SOLE_PROPRIETOR"}, req.EntityType) {
		f.violate("POST /v2/10dlc/brand: entityType %q", req.EntityType)
	}
	id := "B" + strings.ToUpper(hex.EncodeToString(random(3)))
	m["brandId"], m["identityStatus"] = id, "VERIFIED"
	f.mu.Lock()
	f.brands[id] = m
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, m)
}

// campaignRequest is the body of POST /v2/10dlc/campaignBuilder.
type campaignRequest struct {
	BrandID                string `json:"brandId"`
	Usecase                string `json:"usecase"`
	Description            string `json:"description"`
	MessageFlow            string `json:"messageFlow"`
	HelpMessage            string `json:"helpMessage"`
	OptinMessage           string `json:"optinMessage"`
	OptoutMessage          string `json:"optoutMessage"`
	EmbeddedLink           *bool  `json:"embeddedLink"`
	EmbeddedPhone          *bool  `json:"embeddedPhone"`
	AgeGated               *bool  `json:"ageGated"`
	DirectLending          *bool  `json:"directLending"`
	NumberPool             *bool  `json:"numberPool"`
	SubscriberOptin        *bool  `json:"subscriberOptin"`
	SubscriberOptout       *bool  `json:"subscriberOptout"`
	SubscriberHelp         *bool  `json:"subscriberHelp"`
	OptinKeywords          string `json:"optinKeywords"`
	OptoutKeywords         string `json:"optoutKeywords"`
	HelpKeywords           string `json:"helpKeywords"`
	TermsAndConditions     *bool  `json:"termsAndConditions"`
	Sample1                string `json:"sample1"`
	Sample2                string `json:"sample2"`
	Sample3                string `json:"sample3"`
	Sample4                string `json:"sample4"`
	Sample5                string `json:"sample5"`
	PrivacyPolicyLink      string `json:"privacyPolicyLink"`
	TermsAndConditionsLink string `json:"termsAndConditionsLink"`
}

func (f *Fake) createCampaign(w http.ResponseWriter, r *http.Request) {
	var req campaignRequest
	f.decode(r, &req, "brandId", "usecase", "description", "sample1", "messageFlow")
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.brands[req.BrandID] == nil {
		apiError(w, http.StatusBadRequest, "10015", "brandId is not a brand of the account")
		return
	}
	c := &Campaign{ID: "C" + strings.ToUpper(hex.EncodeToString(random(3))), BrandID: req.BrandID, Status: "TCR_PENDING",
		Description: req.Description, changed: time.Now()}
	f.campaigns[c.ID] = c
	writeJSON(w, http.StatusOK, campaignJSON(c))
}

func campaignJSON(c *Campaign) map[string]any {
	out := map[string]any{"campaignId": c.ID, "brandId": c.BrandID, "campaignStatus": c.Status, "description": c.Description}
	if c.Status == "TCR_FAILED" {
		out["failureReasons"] = []map[string]any{{"description": "The message samples do not match the use case"}}
	}
	return out
}

func (f *Fake) campaign(w http.ResponseWriter, r *http.Request, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.campaigns[id]
	if c == nil {
		apiError(w, http.StatusNotFound, "10005", "Resource not found")
		return
	}
	if r.Method == http.MethodDelete {
		delete(f.campaigns, id)
		for n, cid := range f.assigned {
			if cid == id {
				delete(f.assigned, n)
			}
		}
	}
	writeJSON(w, http.StatusOK, campaignJSON(c))
}

func (f *Fake) assign(w http.ResponseWriter, r *http.Request) {
	var req struct {
		PhoneNumber string `json:"phoneNumber"`
		CampaignID  string `json:"campaignId"`
	}
	f.decode(r, &req, "phoneNumber", "campaignId")
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.owned[req.PhoneNumber] == "" || f.campaigns[req.CampaignID] == nil:
		apiError(w, http.StatusNotFound, "10005", "Resource not found")
	case f.assigned[req.PhoneNumber] != "":
		apiError(w, http.StatusConflict, "10015", "The phone number is assigned to a campaign already")
	default:
		f.assigned[req.PhoneNumber] = req.CampaignID
		writeJSON(w, http.StatusOK, map[string]any{"phoneNumber": req.PhoneNumber, "campaignId": req.CampaignID})
	}
}

func (f *Fake) unassign(w http.ResponseWriter, number string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.assigned[number] == "" {
		apiError(w, http.StatusNotFound, "10005", "Resource not found")
		return
	}
	delete(f.assigned, number)
	writeJSON(w, http.StatusOK, map[string]any{"phoneNumber": number})
}

// tollFreeRequest is the body of POST /v2/messaging_tollfree/verification/requests.
type tollFreeRequest struct {
	BusinessName             string `json:"businessName"`
	CorporateWebsite         string `json:"corporateWebsite"`
	BusinessAddr1            string `json:"businessAddr1"`
	BusinessCity             string `json:"businessCity"`
	BusinessState            string `json:"businessState"`
	BusinessZip              string `json:"businessZip"`
	BusinessContactFirstName string `json:"businessContactFirstName"`
	BusinessContactLastName  string `json:"businessContactLastName"`
	BusinessContactEmail     string `json:"businessContactEmail"`
	BusinessContactPhone     string `json:"businessContactPhone"`
	MessageVolume            string `json:"messageVolume"`
	PhoneNumbers             []struct {
		PhoneNumber string `json:"phoneNumber"`
	} `json:"phoneNumbers"`
	UseCase                  string `json:"useCase"`
	UseCaseSummary           string `json:"useCaseSummary"`
	ProductionMessageContent string `json:"productionMessageContent"`
	OptInWorkflow            string `json:"optInWorkflow"`
	OptInWorkflowImageURLs   []struct {
		URL string `json:"url"`
	} `json:"optInWorkflowImageURLs"`
	AdditionalInformation string `json:"additionalInformation"`
	IsvReseller           string `json:"isvReseller"`
	WebhookURL            string `json:"webhookUrl"`
}

func (f *Fake) createTollFree(w http.ResponseWriter, r *http.Request) {
	var req tollFreeRequest
	f.decode(r, &req, "businessName", "corporateWebsite", "businessAddr1", "businessCity", "businessState", "businessZip",
		"businessContactFirstName", "businessContactLastName", "businessContactEmail", "businessContactPhone", "messageVolume",
		"phoneNumbers", "useCase", "useCaseSummary", "productionMessageContent", "optInWorkflow", "optInWorkflowImageURLs",
		"additionalInformation", "isvReseller")
	if len(req.PhoneNumbers) != 1 {
		f.violate("POST verification/requests: %d phoneNumbers", len(req.PhoneNumbers))
		apiError(w, http.StatusBadRequest, "10015", "phoneNumbers")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	number := req.PhoneNumbers[0].PhoneNumber
	if f.owned[number] == "" {
		apiError(w, http.StatusBadRequest, "10015", "The phone number is not the account's")
		return
	}
	for _, t := range f.tollFree {
		if t.Number == number && t.Status != "Rejected" {
			apiError(w, http.StatusBadRequest, "10015", "The phone number has a verification request already")
			return
		}
	}
	t := &TollFree{ID: uuid(), Number: number, Status: "Waiting For Telnyx", Summary: req.UseCaseSummary, changed: time.Now()}
	f.tollFree[t.ID] = t
	writeJSON(w, http.StatusOK, tollFreeJSON(t))
}

func tollFreeJSON(t *TollFree) map[string]any {
	out := map[string]any{"id": t.ID, "verificationStatus": t.Status, "phoneNumbers": []map[string]string{{"phoneNumber": t.Number}},
		"useCaseSummary": t.Summary}
	if t.Status == "Rejected" {
		out["reason"] = "Opt-in workflow is not verifiable"
	}
	return out
}

func (f *Fake) tollFreeRequest(w http.ResponseWriter, r *http.Request, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tollFree[id]
	if t == nil {
		apiError(w, http.StatusNotFound, "10005", "Resource not found")
		return
	}
	if r.Method == http.MethodDelete {
		delete(f.tollFree, id)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusOK, tollFreeJSON(t))
}

// tick moves every review whose time has come.
func (f *Fake) tick() {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	due := func(t time.Time) bool { return now.Sub(t) >= f.ReviewDelay }
	for _, c := range f.campaigns {
		switch {
		case c.Status == "TCR_PENDING" && due(c.changed) && strings.Contains(c.Description, RejectWord):
			c.Status = "TCR_FAILED"
		case c.Status == "TCR_PENDING" && due(c.changed) && !strings.Contains(c.Description, HoldWord):
			c.Status, c.changed = "TCR_ACCEPTED", now
		case c.Status == "TCR_ACCEPTED" && due(c.changed):
			c.Status = "MNO_PROVISIONED"
		}
	}
	for _, t := range f.tollFree {
		switch {
		case t.Status == "Waiting For Telnyx" && due(t.changed):
			t.Status, t.changed = "In Progress", now
		case t.Status == "In Progress" && due(t.changed) && strings.Contains(t.Summary, RejectWord):
			t.Status = "Rejected"
		case t.Status == "In Progress" && due(t.changed) && !strings.Contains(t.Summary, HoldWord):
			t.Status = "Verified"
		}
	}
}

func apiError(w http.ResponseWriter, status int, code, title string) {
	writeJSON(w, status, map[string]any{"errors": []map[string]any{{"code": code, "title": title, "detail": title}}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// uuid returns a random UUID (v4), as Telnyx's ids are.
func uuid() string {
	b := random(16)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
