package server_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

var shortLink = regexp.MustCompile(`https://switchboard\.test/l/([A-Za-z0-9_-]{12})`)

// shorten runs service.ShortenLinks for a message in a transaction, as the send path does.
func shorten(t *tenant, acct, messageID, body string) string {
	var out string
	ExpectWithOffset(1, st.Tx(context.Background(), func(tx *store.Store) error {
		var err error
		out, err = service.ShortenLinks(context.Background(), tx, "https://switchboard.test/",
			service.LinkOwner{ProjectID: t.ProjectID, AccountID: acct, MessageID: messageID}, body)
		return err
	})).To(Succeed())
	return out
}

// shortenedLink sends a real message with settings.link_shortening and returns the code of the
// short link that replaced url in its body.
func (t *tenant) shortenedLink(acct, from, url string) string {
	m := t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "See " + url,
		"metadata": map[string]any{"campaign": "spring"}, "settings": map[string]any{"link_shortening": "enabled"}})
	match := shortLink.FindStringSubmatch(m["body"].(string))
	ExpectWithOffset(1, match).To(HaveLen(2), "body: %v", m["body"])
	return match[1]
}

var _ = Describe("Link shortening", func() {
	var (
		t    *tenant
		acct string
		from string
	)
	BeforeEach(func() {
		t, acct, _, from = newSendingAccount()
	})

	It("replaces each http(s) URL by a short link, leaving sentence punctuation and other text alone", func() {
		body := shorten(t, acct, store.NewID("msg"),
			"Book at https://acme.example/book?d=1&t=2. Or (http://acme.example/call)! Email x@acme.example, www.acme.example stays.")
		Expect(body).To(MatchRegexp(`^Book at https://switchboard\.test/l/[A-Za-z0-9_-]{12}\. Or \(https://switchboard\.test/l/[A-Za-z0-9_-]{12}\)! Email x@acme\.example, www\.acme\.example stays\.$`))
		Expect(shorten(t, acct, store.NewID("msg"), "No links here.")).To(Equal("No links here."))
		Expect(shorten(t, acct, store.NewID("msg"), body)).To(Equal(body), "shortening twice changes nothing")
	})

	It("redirects GET /l/{code} (302, no API key) to the original URL and emits link.followed in the same transaction", func() {
		code := t.shortenedLink(acct, from, "https://acme.example/offers?id=7&utm=sms")
		anonymous := t.withKey("")
		r := anonymous.get("/l/" + code)
		Expect(r).To(HaveStatus(http.StatusFound), r.String())
		Expect(r.Header.Get("Location")).To(Equal("https://acme.example/offers?id=7&utm=sms"))
		Expect(anonymous.get("/l/" + code)).To(HaveStatus(http.StatusFound))

		events := t.events("link.followed")
		Expect(events).To(HaveLen(2), "one per visit")
		msgs := t.get("/accounts/" + acct + "/messages").JSON()["data"].([]any)
		msg := msgs[0].(map[string]any)
		Expect(events[0]).To(SatisfyAll(
			HaveKeyWithValue("id", MatchRegexp(`^lnk_[0-7][0-9a-hjkmnp-tv-z]{25}$`)),
			HaveKeyWithValue("url", "https://acme.example/offers?id=7&utm=sms"),
			HaveKeyWithValue("message_id", msg["id"]),
			HaveKeyWithValue("message", map[string]any{"id": msg["id"], "blast_id": nil, "conversation_id": msg["conversation"].(map[string]any)["id"],
				"metadata": map[string]any{"campaign": "spring"}}),
		))
	})

	It("answers HEAD /l/{code} with the same redirect without recording a visit (link previewers send HEAD)", func() {
		code := t.shortenedLink(acct, from, "https://acme.example/preview")
		anonymous := t.withKey("")
		r := anonymous.request(http.MethodHead, "/l/"+code, nil)
		Expect(r).To(HaveStatus(http.StatusFound), r.String())
		Expect(r.Header.Get("Location")).To(Equal("https://acme.example/preview"))
		Expect(anonymous.request(http.MethodHead, "/l/nosuchcode00", nil)).To(HaveStatus(http.StatusNotFound))
		Consistently(func() []map[string]any { return t.events("link.followed") }, "300ms").Should(BeEmpty())

		Expect(anonymous.get("/l/" + code)).To(HaveStatus(http.StatusFound))
		Eventually(func() []map[string]any { return t.events("link.followed") }).Should(HaveLen(1), "a GET is a visit")
	})

	It("shortens the links of a send with settings.link_shortening, counts segments on the short body, and hands the short body to the carrier", func() {
		long := "https://acme.example/" + strings.Repeat("x", 150)
		to := newHandset()
		m := t.send(acct, map[string]any{"to": to, "from": from, "body": "Book: " + long,
			"settings": map[string]any{"link_shortening": "enabled"}})
		Expect(m["body"]).To(MatchRegexp(`^Book: https://switchboard\.test/l/[A-Za-z0-9_-]{12}$`))
		Expect(m["segments"]).To(BeEquivalentTo(1), "the long URL alone would need two segments")
		t.awaitStatus(m["id"].(string), "delivered")
		Expect(outbox(to)).To(ContainElement(HaveField("Body", m["body"])))

		plain := t.send(acct, map[string]any{"to": newHandset(), "from": from, "body": "Book: " + long})
		Expect(plain["body"]).To(Equal("Book: "+long), "no shortening unless asked")
		Expect(plain["segments"]).To(BeEquivalentTo(2))
	})

	DescribeTable("takes settings.link_shortening as Surge's enabled or disabled, and the deprecated boolean",
		func(setting any, shortened bool) {
			r := t.post("/accounts/"+acct+"/messages", map[string]any{"to": newHandset(), "from": from, "body": "Book: https://acme.example/a",
				"settings": map[string]any{"link_shortening": setting}})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			m := r.JSON()
			if _, boolean := setting.(bool); boolean {
				Expect(r.Header.Get("Deprecation")).To(Equal("@1795478400"), "the boolean form is deprecated (RFC 9745)")
			} else {
				Expect(r.Header).NotTo(HaveKey("Deprecation"))
			}
			if shortened {
				Expect(m["body"]).To(MatchRegexp(`^Book: https://switchboard\.test/l/[A-Za-z0-9_-]{12}$`))
			} else {
				Expect(m["body"]).To(Equal("Book: https://acme.example/a"))
			}
		},
		Entry("enabled", "enabled", true),
		Entry("disabled", "disabled", false),
		Entry("true (deprecated)", true, true),
		Entry("false (deprecated)", false, false),
	)

	It("refuses a link_shortening that is neither form, naming it", func() {
		for _, v := range []any{"yes", 1, nil} {
			Expect(t.post("/accounts/"+acct+"/messages", map[string]any{"to": newHandset(), "from": from, "body": "Hi",
				"settings": map[string]any{"link_shortening": v}})).To(HaveFieldError("settings.link_shortening"))
		}
	})

	It("answers 404 in the error envelope for an unknown code, 422 for a malformed one", func() {
		Expect(t.withKey("").get("/l/Unknown_code1")).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(t.withKey("").get("/l/a!")).To(HaveStatus(http.StatusUnprocessableEntity))
		Expect(t.events("link.followed")).To(BeEmpty())
	})
})
