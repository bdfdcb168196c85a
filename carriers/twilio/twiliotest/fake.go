// Package twiliotest is a fake Twilio for tests: an HTTP server that speaks the part of
// Twilio's 2010-04-01 REST API the adapter uses (Messages, AvailablePhoneNumbers,
// IncomingPhoneNumbers, Recordings, inbound Media) and of its A2P 10DLC and toll-free
// registration (see registry.go), checks every request against Twilio's documented wire format
// (method, path, HTTP basic auth AccountSid:AuthToken, form fields), and sends signed callbacks
// (status callbacks, inbound messages, calls, TrustHub statuses) as Twilio does. It is not a simulator
// for operators: carriers/sim is.
package twiliotest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard/switchboard/carriers/twilio"
)

// Test credentials of the fake's account.
const (
	AccountSID = "AC00000000000000000000000000000001"
	AuthToken  = "fake-auth-token"
)

// Fake is a fake Twilio account.
type Fake struct {
	// URL is the fake REST API's base, for the adapter's APIBase.
	URL string
	// Callbacks receives the callbacks the fake sends, as requests to the public URLs the
	// adapter gave (the installation's server, or the adapter's Handler). Set it before use.
	Callbacks http.Handler
	// StatusDelay is how long after accepting a message its status callbacks are sent.
	StatusDelay time.Duration
	// ReviewDelay is how long each step of a registration's review takes (see registry.go).
	ReviewDelay time.Duration

	srv *httptest.Server

	mu         sync.Mutex
	violations []string
	messages   []Message
	// failures: a message to the key is accepted and then undelivered with the error code.
	failures map[string]int
	// refusals: a message to the key is refused with 400 and the error code.
	refusals map[string]int
	// owned numbers: number -> incoming phone number.
	owned     map[string]*IncomingNumber
	callbacks []Callback
	// media: the files of inbound messages by their Media sid; mediaFetches counts the fetches
	// of each from the CDN.
	media        map[string]File
	mediaFetches map[string]int
	// reg is the registration state; businessNames the business_name of business information.
	reg           registry
	businessNames map[string]string
}

// File is a media file of an inbound message.
type File struct {
	ContentType string
	Data        []byte
}

// Message is a message the fake accepted.
type Message struct {
	SID, To, From, Body, StatusCallback string
	// MessagingServiceSID is the Messaging Service it was sent through, if any.
	MessagingServiceSID string
	MediaURLs           []string
}

// IncomingNumber is a number the account bought, with the webhooks it was given.
type IncomingNumber struct {
	SID, PhoneNumber, SmsURL, VoiceURL, StatusCallback string
}

// Callback is a callback the fake sent and the status it was answered with.
type Callback struct {
	URL    string
	Params url.Values
	Status int
	Body   string
}

// New starts a fake; Close stops it.
func New() *Fake {
	f := &Fake{failures: map[string]int{}, refusals: map[string]int{}, owned: map[string]*IncomingNumber{},
		media: map[string]File{}, mediaFetches: map[string]int{}, StatusDelay: 20 * time.Millisecond,
		ReviewDelay: 20 * time.Millisecond, reg: newRegistry(), businessNames: map[string]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	f.URL = f.srv.URL
	return f
}

// Close stops the fake's server.
func (f *Fake) Close() { f.srv.Close() }

// FailTo makes messages to number undelivered with a Twilio error code (30003, 30007, …).
func (f *Fake) FailTo(number string, code int) { f.mu.Lock(); f.failures[number] = code; f.mu.Unlock() }

// RefuseTo makes the API refuse messages to number with 400 and an error code (21211, 21610, …).
func (f *Fake) RefuseTo(number string, code int) {
	f.mu.Lock()
	f.refusals[number] = code
	f.mu.Unlock()
}

// Violations lists the requests that broke Twilio's wire format.
func (f *Fake) Violations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.violations)
}

// Messages lists the messages the fake accepted, oldest first.
func (f *Fake) Messages() []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.messages)
}

// MessagesTo lists the messages accepted to one handset.
func (f *Fake) MessagesTo(to string) []Message {
	var out []Message
	for _, m := range f.Messages() {
		if m.To == to {
			out = append(out, m)
		}
	}
	return out
}

// Owned returns the incoming phone number the account holds for number, or nil.
func (f *Fake) Owned(number string) *IncomingNumber {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.owned[number]; n != nil {
		c := *n
		return &c
	}
	return nil
}

// Callbacks lists the callbacks sent so far.
func (f *Fake) SentCallbacks() []Callback {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.callbacks)
}

func (f *Fake) violate(format string, args ...any) {
	f.mu.Lock()
	f.violations = append(f.violations, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

// api paths of the account.
var (
	messagesPath  = regexp.MustCompile(`^/2010-04-01/Accounts/([^/]+)/Messages\.json$`)
	availablePath = regexp.MustCompile(`^/2010-04-01/Accounts/([^/]+)/AvailablePhoneNumbers/([A-Z]{2})/(Local|TollFree)\.json$`)
	incomingPath  = regexp.MustCompile(`^/2010-04-01/Accounts/([^/]+)/IncomingPhoneNumbers\.json$`)
	incomingOne   = regexp.MustCompile(`^/2010-04-01/Accounts/([^/]+)/IncomingPhoneNumbers/(PN[0-9a-f]{32})\.json$`)
	recordingPath = regexp.MustCompile(`^/2010-04-01/Accounts/([^/]+)/Recordings/(RE[0-9a-f]{32})\.wav$`)
	mediaPath     = regexp.MustCompile(`^/2010-04-01/Accounts/([^/]+)/Messages/(MM[0-9a-f]{32})/Media/(ME[0-9a-f]{32})$`)
	cdnPath       = regexp.MustCompile(`^/cdn/(ME[0-9a-f]{32})$`)
	e164          = regexp.MustCompile(`^\+[1-9]\d{6,14}$`)
)

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if m := cdnPath.FindStringSubmatch(r.URL.Path); m != nil {
		f.cdn(w, r, m[1])
		return
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user != AccountSID || pass != AuthToken {
		f.violate("%s %s: no HTTP basic auth AccountSid:AuthToken", r.Method, r.URL.Path)
		apiError(w, http.StatusUnauthorized, 20003, "Authenticate")
		return
	}
	p := r.URL.Path
	for _, re := range []*regexp.Regexp{messagesPath, availablePath, incomingPath, incomingOne, recordingPath, mediaPath} {
		if m := re.FindStringSubmatch(p); m != nil && m[1] != AccountSID {
			f.violate("%s %s: the path names another account", r.Method, p)
		}
	}
	if r.Method == http.MethodPost {
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
			f.violate("%s %s: Content-Type %q is not form-encoded", r.Method, p, ct)
		}
		if err := r.ParseForm(); err != nil {
			f.violate("%s %s: unreadable form: %v", r.Method, p, err)
		}
	}
	if e, ids := endpoint(r); e != nil {
		f.serveRegistry(w, r, e, ids)
		return
	}
	switch {
	case r.Method == http.MethodPost && messagesPath.MatchString(p):
		f.createMessage(w, r)
	case r.Method == http.MethodGet && availablePath.MatchString(p):
		m := availablePath.FindStringSubmatch(p)
		f.available(w, r, m[2], m[3])
	case r.Method == http.MethodPost && incomingPath.MatchString(p):
		f.buy(w, r)
	case r.Method == http.MethodGet && incomingPath.MatchString(p):
		f.listIncoming(w, r)
	case r.Method == http.MethodDelete && incomingOne.MatchString(p):
		f.release(w, incomingOne.FindStringSubmatch(p)[2])
	case r.Method == http.MethodGet && mediaPath.MatchString(p):
		f.mediaRedirect(w, r, mediaPath.FindStringSubmatch(p)[3])
	case r.Method == http.MethodGet && recordingPath.MatchString(p):
		w.Header().Set("Content-Type", "audio/x-wav")
		_, _ = w.Write(RecordingWAV)
	default:
		f.violate("%s %s: no such resource", r.Method, p)
		apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
	}
}

// RecordingWAV is what every recording of the fake holds.
var RecordingWAV = append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), make([]byte, 28)...)

// The form fields of the 2010 API's operations the fake serves outside Endpoints: the fake
// requires From (Twilio's description requires only To, with From or MessagingServiceSid).
var (
	MessageFields = &Endpoint{Method: http.MethodPost, Path: "/2010-04-01/Accounts/{AccountSid}/Messages.json", API: "api_v2010",
		Required: []string{"To", "From"}, Optional: []string{"Body", "MediaUrl", "StatusCallback", "MessagingServiceSid"}}
	BuyFields = &Endpoint{Method: http.MethodPost, Path: "/2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers.json", API: "api_v2010",
		Required: []string{"PhoneNumber"}, Optional: []string{"SmsUrl", "SmsMethod", "VoiceUrl", "VoiceMethod", "StatusCallback", "StatusCallbackMethod"}}
)

// onlyFields records a violation for form fields outside allowed, and for missing required ones.
func (f *Fake) onlyFields(r *http.Request, required []string, allowed ...string) {
	for k := range r.PostForm {
		if !slices.Contains(allowed, k) && !slices.Contains(required, k) {
			f.violate("%s %s: unknown parameter %s", r.Method, r.URL.Path, k)
		}
	}
	for _, k := range required {
		if r.PostForm.Get(k) == "" {
			f.violate("%s %s: missing parameter %s", r.Method, r.URL.Path, k)
		}
	}
}

func (f *Fake) createMessage(w http.ResponseWriter, r *http.Request) {
	form := r.PostForm
	f.onlyFields(r, MessageFields.Required, MessageFields.Optional...)
	if svc := form.Get("MessagingServiceSid"); svc != "" {
		f.mu.Lock()
		s, in := f.reg.services[svc], f.owned[form.Get("From")]
		ok := s != nil && in != nil && slices.Contains(s.Numbers, in.SID)
		f.mu.Unlock()
		if !ok {
			f.violate("POST Messages.json: From %s is not a number of the Messaging Service %s", form.Get("From"), svc)
		}
	}
	if form.Get("Body") == "" && len(form["MediaUrl"]) == 0 {
		f.violate("POST Messages.json: neither Body nor MediaUrl")
	}
	if !e164.MatchString(form.Get("From")) && !regexp.MustCompile(`^\d{5,6}$`).MatchString(form.Get("From")) {
		f.violate("POST Messages.json: From %q is neither E.164 nor a short code", form.Get("From"))
	}
	for _, u := range append(slices.Clone(form["MediaUrl"]), form.Get("StatusCallback")) {
		if pu, err := url.Parse(u); u != "" && (err != nil || !pu.IsAbs()) {
			f.violate("POST Messages.json: %q is not an absolute URL", u)
		}
	}
	to := form.Get("To")
	f.mu.Lock()
	refusal, failure := f.refusals[to], f.failures[to]
	f.mu.Unlock()
	if !e164.MatchString(to) {
		refusal = 21211
	}
	if refusal != 0 {
		apiError(w, http.StatusBadRequest, refusal, "refused by the fake")
		return
	}
	m := Message{SID: sid("SM"), To: to, From: form.Get("From"), Body: form.Get("Body"),
		StatusCallback: form.Get("StatusCallback"), MessagingServiceSID: form.Get("MessagingServiceSid"), MediaURLs: form["MediaUrl"]}
	f.mu.Lock()
	f.messages = append(f.messages, m)
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"sid": m.SID, "account_sid": AccountSID, "to": m.To, "from": m.From,
		"body": m.Body, "status": "queued", "num_media": strconv.Itoa(len(m.MediaURLs)), "error_code": nil, "error_message": nil,
		"api_version": "2010-04-01", "uri": "/2010-04-01/Accounts/" + AccountSID + "/Messages/" + m.SID + ".json"})
	if m.StatusCallback == "" {
		return
	}
	go func() {
		time.Sleep(f.StatusDelay)
		base := url.Values{"MessageSid": {m.SID}, "SmsSid": {m.SID}, "AccountSid": {AccountSID}, "From": {m.From}, "To": {m.To},
			"ApiVersion": {"2010-04-01"}}
		f.Post(m.StatusCallback, with(base, "MessageStatus", "sent", "SmsStatus", "sent"))
		if failure != 0 {
			f.Post(m.StatusCallback, with(base, "MessageStatus", "undelivered", "SmsStatus", "undelivered", "ErrorCode", strconv.Itoa(failure)))
			return
		}
		f.Post(m.StatusCallback, with(base, "MessageStatus", "delivered", "SmsStatus", "delivered"))
	}()
}

// with returns a copy of v with the name, value pairs set.
func with(v url.Values, pairs ...string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		out.Set(pairs[i], pairs[i+1])
	}
	return out
}

// Inventory: local numbers +1 AAA 555 01XX for any area code (415 without one); toll-free
// +1 PPP 555 01XX for 800 and 833 to 888, the 800 ones first (Twilio sells them; Switchboard
// must leave them out).
var tollFreePrefixes = []string{"800", "833", "844", "855", "866", "877", "888"}

// inInventory reports whether the fake can sell number.
func inInventory(number string) bool {
	return regexp.MustCompile(`^\+1[2-9]\d{2}55501\d{2}$`).MatchString(number)
}

// places locates the fake's area codes the way Twilio's answer does, as decimal strings; a local
// search near a place offers them nearest first, and the others not at all.
var places = map[string][2]string{"415": {"37.77", "-122.42"}, "510": {"37.80", "-122.27"}, "212": {"40.71", "-74.01"}, "312": {"41.88", "-87.63"}}

var (
	nearLatLong = regexp.MustCompile(`^-?\d{1,2}(\.\d+)?,-?\d{1,3}(\.\d+)?$`)
	distance    = regexp.MustCompile(`^\d{1,3}$`)
)

// nearestPlaces are the located area codes within 100 miles of "lat,long", farthest first (Twilio
// does not promise an order; the adapter sorts).
func nearestPlaces(near string) []string {
	lat, lon, _ := strings.Cut(near, ",")
	la, _ := strconv.ParseFloat(lat, 64)
	lo, _ := strconv.ParseFloat(lon, 64)
	type ranked struct {
		code string
		d    float64
	}
	var in []ranked
	for code, at := range places {
		pla, _ := strconv.ParseFloat(at[0], 64)
		plo, _ := strconv.ParseFloat(at[1], 64)
		if d := math.Hypot(pla-la, (plo-lo)*math.Cos(la*math.Pi/180)) * 69; d <= 100 {
			in = append(in, ranked{code, d})
		}
	}
	slices.SortFunc(in, func(a, b ranked) int { return cmp.Compare(b.d, a.d) })
	out := make([]string, len(in))
	for i, r := range in {
		out[i] = r.code
	}
	return out
}

func (f *Fake) available(w http.ResponseWriter, r *http.Request, country, kind string) {
	q := r.URL.Query()
	for k := range q {
		if k != "AreaCode" && k != "PageSize" && k != "NearLatLong" && k != "Distance" {
			f.violate("GET AvailablePhoneNumbers: unknown parameter %s", k)
		}
	}
	near, hasNear := q.Get("NearLatLong"), q.Has("NearLatLong")
	if hasNear && (kind != "Local" || !nearLatLong.MatchString(near)) {
		f.violate("GET AvailablePhoneNumbers: NearLatLong %q is not latitude,longitude of a Local search", near)
	}
	if d := q.Get("Distance"); q.Has("Distance") && (!hasNear || !distance.MatchString(d)) {
		f.violate("GET AvailablePhoneNumbers: Distance %q is not 0 to 500 miles with NearLatLong", d)
	}
	if country != "US" && country != "CA" {
		apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	}
	size, err := strconv.Atoi(q.Get("PageSize"))
	if q.Get("PageSize") == "" {
		size = 50
	} else if err != nil || size < 1 || size > 1000 {
		f.violate("GET AvailablePhoneNumbers: PageSize %q is not 1 to 1000", q.Get("PageSize"))
	}
	prefixes := []string{q.Get("AreaCode")}
	switch {
	case kind == "TollFree" && prefixes[0] == "":
		prefixes = tollFreePrefixes
	case kind == "Local" && prefixes[0] == "" && hasNear:
		prefixes = nearestPlaces(near)
	case kind == "Local" && prefixes[0] == "":
		prefixes = []string{"415"}
	case kind == "TollFree" && !slices.Contains(tollFreePrefixes, prefixes[0]):
		prefixes = nil
	case kind == "Local" && slices.Contains(tollFreePrefixes, prefixes[0]):
		prefixes = nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	list := []map[string]any{}
	for _, p := range prefixes {
		for i := 0; i < 100 && len(list) < size; i++ {
			n := fmt.Sprintf("+1%s55501%02d", p, i)
			if f.owned[n] == nil {
				entry := map[string]any{"phone_number": n, "friendly_name": n, "iso_country": country,
					"capabilities": map[string]bool{"voice": true, "SMS": true, "MMS": true}}
				if at, ok := places[p]; ok && kind == "Local" {
					entry["latitude"], entry["longitude"] = at[0], at[1]
				}
				list = append(list, entry)
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"available_phone_numbers": list, "uri": r.URL.Path})
}

func (f *Fake) buy(w http.ResponseWriter, r *http.Request) {
	f.onlyFields(r, BuyFields.Required, BuyFields.Optional...)
	n := r.PostForm.Get("PhoneNumber")
	f.mu.Lock()
	defer f.mu.Unlock()
	if !inInventory(n) || f.owned[n] != nil {
		apiError(w, http.StatusBadRequest, 21422, "PhoneNumber requested is not available")
		return
	}
	in := &IncomingNumber{SID: sid("PN"), PhoneNumber: n, SmsURL: r.PostForm.Get("SmsUrl"), VoiceURL: r.PostForm.Get("VoiceUrl"),
		StatusCallback: r.PostForm.Get("StatusCallback")}
	f.owned[n] = in
	writeJSON(w, http.StatusCreated, incomingJSON(in))
}

func (f *Fake) listIncoming(w http.ResponseWriter, r *http.Request) {
	want := r.URL.Query().Get("PhoneNumber")
	f.mu.Lock()
	defer f.mu.Unlock()
	list := []map[string]any{}
	for _, in := range f.owned {
		if want == "" || in.PhoneNumber == want {
			list = append(list, incomingJSON(in))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"incoming_phone_numbers": list})
}

func (f *Fake) release(w http.ResponseWriter, pn string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for n, in := range f.owned {
		if in.SID == pn {
			delete(f.owned, n)
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
}

func incomingJSON(in *IncomingNumber) map[string]any {
	return map[string]any{"sid": in.SID, "account_sid": AccountSID, "phone_number": in.PhoneNumber, "sms_url": in.SmsURL,
		"voice_url": in.VoiceURL, "status_callback": in.StatusCallback}
}

// Post sends a signed callback to fullURL, through Callbacks, and returns the answer.
func (f *Fake) Post(fullURL string, params url.Values) Callback {
	return f.PostSigned(fullURL, params, twilio.Signature(AuthToken, fullURL, params))
}

// PostSigned sends a callback with the given signature ("" for none).
func (f *Fake) PostSigned(fullURL string, params url.Values, signature string) Callback {
	req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, fullURL, strings.NewReader(params.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "TwilioProxy/1.1")
	if signature != "" {
		req.Header.Set(twilio.SignatureHeader, signature)
	}
	rec := httptest.NewRecorder()
	f.Callbacks.ServeHTTP(rec, req)
	cb := Callback{URL: fullURL, Params: params, Status: rec.Code, Body: rec.Body.String()}
	f.mu.Lock()
	f.callbacks = append(f.callbacks, cb)
	f.mu.Unlock()
	return cb
}

// Inbound sends a message from a handset to smsURL (a number's SmsUrl), as Twilio does, and
// returns the callback with its MessageSid in Params.
func (f *Fake) Inbound(smsURL, from, to, body string, mediaURLs ...string) Callback {
	id := sid("SM")
	p := url.Values{"MessageSid": {id}, "SmsMessageSid": {id}, "SmsSid": {id}, "AccountSid": {AccountSID}, "From": {from},
		"To": {to}, "Body": {body}, "NumMedia": {strconv.Itoa(len(mediaURLs))}, "NumSegments": {"1"},
		"SmsStatus": {"received"}, "ApiVersion": {"2010-04-01"}}
	for i, u := range mediaURLs {
		p.Set("MediaUrl"+strconv.Itoa(i), u)
		p.Set("MediaContentType"+strconv.Itoa(i), "image/jpeg")
	}
	return f.Post(smsURL, p)
}

// InboundMMS sends a message with media files from a handset to smsURL, as Twilio does: each
// MediaUrl{N} is a Media resource of the account's API, which answers an authenticated GET with
// a redirect to the file on Twilio's CDN (another host: here localhost instead of 127.0.0.1).
func (f *Fake) InboundMMS(smsURL, from, to, body string, files ...File) Callback {
	id := sid("MM")
	p := url.Values{"MessageSid": {id}, "SmsMessageSid": {id}, "SmsSid": {id}, "AccountSid": {AccountSID}, "From": {from},
		"To": {to}, "Body": {body}, "NumMedia": {strconv.Itoa(len(files))}, "NumSegments": {"1"},
		"SmsStatus": {"received"}, "ApiVersion": {"2010-04-01"}}
	for i, file := range files {
		me := sid("ME")
		f.mu.Lock()
		f.media[me] = file
		f.mu.Unlock()
		p.Set("MediaUrl"+strconv.Itoa(i), f.URL+"/2010-04-01/Accounts/"+AccountSID+"/Messages/"+id+"/Media/"+me)
		p.Set("MediaContentType"+strconv.Itoa(i), file.ContentType)
	}
	return f.Post(smsURL, p)
}

// MediaFetches is how often the CDN served the media file of an InboundMMS callback's MediaUrl.
func (f *Fake) MediaFetches(mediaURL string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mediaFetches[mediaURL[strings.LastIndex(mediaURL, "/")+1:]]
}

// mediaRedirect answers a Media resource (already authenticated) with a temporary redirect to
// the file on the CDN host.
func (f *Fake) mediaRedirect(w http.ResponseWriter, r *http.Request, me string) {
	f.mu.Lock()
	_, ok := f.media[me]
	f.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, 20404, "The requested resource was not found")
		return
	}
	cdn := *r.URL
	cdn.Scheme, cdn.Host, cdn.Path = "http", strings.Replace(f.srv.Listener.Addr().String(), "127.0.0.1", "localhost", 1), "/cdn/"+me
	http.Redirect(w, r, cdn.String(), http.StatusTemporaryRedirect)
}

// cdn serves a media file, as Twilio's CDN does, to anyone holding the (unguessable) URL. The
// account's credentials must never reach it.
func (f *Fake) cdn(w http.ResponseWriter, r *http.Request, me string) {
	if r.Header.Get("Authorization") != "" {
		f.violate("GET %s: the account's credentials were sent to the CDN", r.URL.Path)
	}
	f.mu.Lock()
	file, ok := f.media[me]
	if ok {
		f.mediaFetches[me]++
	}
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", file.ContentType)
	_, _ = w.Write(file.Data)
}

// RecordingURL is the RecordingUrl of a recording of the fake's account.
func (f *Fake) RecordingURL() string {
	return f.URL + "/2010-04-01/Accounts/" + AccountSID + "/Recordings/" + sid("RE")
}

func apiError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "message": msg, "status": status,
		"more_info": "https://www.twilio.com/docs/errors/" + strconv.Itoa(code)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// sid returns a fresh Twilio-style sid: a two-letter prefix and 32 hexadecimal digits.
func sid(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
