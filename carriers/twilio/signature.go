package twilio

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // Twilio signs its callbacks with HMAC-SHA1
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// SignatureHeader carries Twilio's signature of a callback.
const SignatureHeader = "X-Twilio-Signature"

// Signature computes Twilio's signature of a request to fullURL (exactly as configured at Twilio,
// query included) with the form parameters params: base64(HMAC-SHA1(authToken, fullURL followed
// by each parameter's name and value, sorted by name)).
func Signature(authToken, fullURL string, params url.Values) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(fullURL)
	for _, k := range keys {
		vals := slices.Clone(params[k])
		slices.Sort(vals)
		for _, v := range vals {
			b.WriteString(k)
			b.WriteString(v)
		}
	}
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// ValidSignature reports whether signature is Twilio's signature of a request to fullURL with
// params. As Twilio's own libraries do, it accepts the URL with or without the scheme's
// default port, since proxies add or drop it.
func ValidSignature(authToken, fullURL string, params url.Values, signature string) bool {
	if signature == "" {
		return false
	}
	for _, u := range urlVariants(fullURL) {
		if hmac.Equal([]byte(Signature(authToken, u, params)), []byte(signature)) {
			return true
		}
	}
	return false
}

// urlVariants returns fullURL and, when it is an http(s) URL, the same with its port removed or
// the scheme's default port added.
func urlVariants(fullURL string) []string {
	out := []string{fullURL}
	u, err := url.Parse(fullURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return out
	}
	v := *u
	if u.Port() != "" {
		v.Host = u.Hostname()
	} else if u.Scheme == "https" {
		v.Host = u.Host + ":443"
	} else {
		v.Host = u.Host + ":80"
	}
	return append(out, v.String())
}
