package server_test

import (
	"net/http"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/store"
)

// HEAD is served wherever GET is (RFC 9110 §9.3.2): the same status and headers, no body.
var _ = Describe("HEAD", func() {
	// sameAsGet requests path with GET and with HEAD and compares the answers.
	sameAsGet := func(t *tenant, path string) int {
		get := t.request(http.MethodGet, path, nil)
		head := t.request(http.MethodHead, path, nil)
		ExpectWithOffset(1, head.Status).To(Equal(get.Status), "HEAD %s: %s", path, get)
		ExpectWithOffset(1, head.Body).To(BeEmpty(), "HEAD %s", path)
		for name := range get.Header {
			switch name {
			case "Date", "X-Request-Id", "Ratelimit-Remaining", "Content-Length", "Location":
				continue // per request
			}
			ExpectWithOffset(1, head.Header.Values(name)).To(Equal(get.Header.Values(name)), "HEAD %s: %s", path, name)
		}
		if strings.HasPrefix(path, "/metrics") {
			return get.Status // its figures move between the two requests
		}
		if len(get.Body) > 0 {
			ExpectWithOffset(1, head.Header.Get("Content-Length")).To(Equal(strconv.Itoa(len(get.Body))), "HEAD %s", path)
		}
		return get.Status
	}

	It("answers on every GET operation of the contract as GET does, with a key and without", func() {
		t, sender, _, _ := newSendingAccount()
		msg := t.send(sender, map[string]any{"to": newHandset(), "body": "Hi"})
		// Another account, with a number bought through the API, so that every list of it holds
		// what the API made.
		acct := t.createAccount("Acme Dental")
		pn, _ := t.addNumber(acct, numberSetup{})
		audience := t.post("/accounts/"+acct+"/audiences", map[string]any{"name": "VIP"}).JSON()["id"].(string)
		contact := msg["conversation"].(map[string]any)["contact"].(map[string]any)["id"].(string)
		user := t.post("/accounts/"+acct+"/users", map[string]any{"first_name": "Mia"}).JSON()["id"].(string)
		// ids fills a path parameter by the collection before it.
		ids := map[string]string{
			"accounts": acct, "messages": msg["id"].(string), "conversations": msg["conversation"].(map[string]any)["id"].(string),
			"contacts": contact, "audiences": audience, "users": user, "phone_numbers": pn,
		}
		spec, err := gen.GetSwagger()
		Expect(err).NotTo(HaveOccurred())
		statuses := map[int]int{}
		for path, item := range spec.Paths.Map() {
			if item.Get == nil {
				continue
			}
			segs := strings.Split(path, "/")
			for i, s := range segs {
				if strings.HasPrefix(s, "{") {
					segs[i] = ids[segs[i-1]]
					if segs[i] == "" {
						segs[i] = store.NewID(strings.TrimSuffix(segs[i-1], "s"))
					}
				}
			}
			filled := strings.Join(segs, "/")
			if item.Get.Parameters.GetByInAndName("query", "type") != nil {
				filled += "?type=local" // available numbers: a required parameter
			}
			statuses[sameAsGet(t, filled)]++
			sameAsGet(t.withKey(""), filled)
		}
		Expect(statuses).To(HaveKey(http.StatusOK), "most of them answer 200: %v", statuses)
		Expect(statuses[http.StatusOK]).To(BeNumerically(">=", 20), "%v", statuses)
	})

	It("answers on signed file URLs, public routes, unknown routes and wrong methods as GET does", func() {
		t := newTenant()
		for _, path := range []string{"/healthz", "/readyz", "/.well-known/jwks.json", "/l/nosuchcode", "/files/forged.1.x",
			"/files/recordings/forged.1.x", "/no/such/route", "/accounts/" + store.NewID("acct") + "/messages/cancel"} {
			sameAsGet(t, path)
			sameAsGet(t.withKey(""), path)
		}
	})

	It("answers an error with the envelope's status, type and length, and no body", func() {
		t := newTenant()
		path := "/users/" + store.NewID(store.PrefixUser)
		r := t.get(path)
		Expect(r).To(HaveError(http.StatusNotFound, "not_found"))
		head := t.request(http.MethodHead, path, nil)
		Expect(head.Status).To(Equal(http.StatusNotFound))
		Expect(head.Body).To(BeEmpty())
		Expect(head.Header.Get("Content-Type")).To(HavePrefix("application/json"))
		Expect(head.Header.Get("Content-Length")).To(Equal(strconv.Itoa(len(r.Body))))
	})
})
