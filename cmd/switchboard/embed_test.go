package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("embed commands", func() {
	var c *cli
	BeforeEach(func() { c = newCLI() })

	It("add, list and remove a project's embedding origins, normalized, and refuse what is not an origin", func() {
		project := c.createProject("Acme")
		var out struct {
			Origins []string `json:"origins"`
		}
		c.json(&out, "embed origins add", "--project", project, "HTTPS://App.Acme.com:443/", "http://localhost:5173")
		Expect(out.Origins).To(Equal([]string{"http://localhost:5173", "https://app.acme.com"}))
		c.json(&out, "embed origins add", "--project", project, "https://app.acme.com")
		Expect(out.Origins).To(HaveLen(2), "adding again changes nothing")

		for _, bad := range []string{"http://app.acme.com", "https://app.acme.com/inbox", "https://a.com; script-src *", "*"} {
			_, err := c.run("embed origins add", "--project", project, bad)
			Expect(err).To(HaveOccurred(), bad)
		}
		_, err := c.run("embed origins add", "--project", "prj_01jtp4dsdq6de56aa0tfm2e5b3", "https://x.com")
		Expect(err).To(MatchError(ContainSubstring("not found")))

		c.json(&out, "embed origins remove", "--project", project, "http://localhost:5173")
		Expect(out.Origins).To(Equal([]string{"https://app.acme.com"}))
		_, err = c.run("embed origins remove", "--project", project, "http://localhost:5173")
		Expect(err).To(MatchError(ContainSubstring("not found")))
		c.json(&out, "embed origins list", "--project", project)
		Expect(out.Origins).To(Equal([]string{"https://app.acme.com"}))
	})

	It("create, list and revoke an account's publishable tokens, shown once and stored hashed", func() {
		ctx := context.Background()
		st, _, acct := c.account(ctx)
		var tok map[string]any
		c.json(&tok, "embed token create", "--account", acct.ID)
		secret := tok["token"].(string)
		Expect(secret).To(HavePrefix("atok_live_"))
		u := newUserIn(st, acct.ProjectID, acct.ID)
		_, err := st.ViewerOfPublishableToken(ctx, secret, u)
		Expect(err).NotTo(HaveOccurred())

		var list []map[string]any
		c.json(&list, "embed token list", "--account", acct.ID)
		Expect(list).To(ConsistOf(SatisfyAll(HaveKeyWithValue("id", tok["id"]), HaveKeyWithValue("revoked_at", BeNil()),
			HaveKeyWithValue("hint", HaveSuffix(secret[len(secret)-4:])))))
		raw, _ := json.Marshal(list)
		Expect(string(raw)).NotTo(ContainSubstring(secret), "the secret is shown once")

		c.json(&tok, "embed token revoke", tok["id"].(string))
		Expect(tok["revoked_at"]).NotTo(BeNil())
		_, err = st.ViewerOfPublishableToken(ctx, secret, u)
		Expect(err).To(HaveOccurred())
		_, err = c.run("embed token create", "--account", "acct_01jtp4dsdq6de56aa0tfm2e5b3")
		Expect(err).To(MatchError(ContainSubstring("not found")))
	})

	It("serve --dev-key prints a link to the components' demo, whose page and token endpoint work with its secret", func() {
		s := c.serve("--dev-key")
		link := regexp.MustCompile(`https://\S+/embed/demo#\S+`).FindString(s.stdout.String())
		Expect(link).NotTo(BeEmpty(), "stdout: %s", s.stdout.String())
		Expect(s.stdout.String()).To(ContainSubstring("switchboard sim inbound --from"))
		u, err := url.Parse(link)
		Expect(err).NotTo(HaveOccurred())
		frag, err := url.ParseQuery(u.EscapedFragment())
		Expect(err).NotTo(HaveOccurred())
		Expect(frag.Get("token")).To(HavePrefix("ey"))
		Expect(frag.Get("number")).To(HavePrefix("+1"))

		status, page := s.do(http.MethodGet, "/embed/demo", "", "")
		Expect(status).To(Equal(http.StatusOK))
		Expect(page).To(ContainSubstring("Acme Dental"))
		status, _ = s.do(http.MethodPost, "/embed/demo/token", "", "")
		Expect(status).To(Equal(http.StatusUnauthorized), "no secret, no token")
		s.headers = map[string]string{"X-Demo-Secret": frag.Get("secret")}
		status, body := s.do(http.MethodPost, "/embed/demo/token", "", "")
		Expect(status).To(Equal(http.StatusCreated), body)
		Expect(strings.Count(body, ".")).To(Equal(2), "a JWT")
	})
})

// newUserIn creates a user in an account and returns its id.
func newUserIn(st *store.Store, projectID, accountID string) string {
	u := &store.User{ProjectID: projectID, AccountID: accountID, FirstName: "Dana"}
	ExpectWithOffset(1, st.CreateUser(context.Background(), u)).To(Succeed())
	return u.ID
}
