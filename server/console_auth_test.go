package server_test

import (
	"context"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/pquerna/otp/totp"

	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

var _ = Describe("Console sign-in", func() {
	var (
		t     *tenant
		email string
	)
	BeforeEach(func() {
		t = newTenant()
		email = newConsoleUser(t.ProjectID, store.RoleOwner)
	})

	It("sets a Secure, HttpOnly, SameSite=Strict host cookie and answers who is signed in", func() {
		c := newConsoleClient()
		r := c.login(strings.ToUpper(email), consolePassword, "")
		Expect(r).To(HaveStatus(http.StatusOK))
		cookies := (&http.Response{Header: r.Header}).Cookies()
		Expect(cookies).To(HaveLen(1))
		ck := cookies[0]
		Expect(ck.Name).To(Equal("__Host-switchboard_console"))
		Expect(ck.Secure).To(BeTrue())
		Expect(ck.HttpOnly).To(BeTrue())
		Expect(ck.SameSite).To(Equal(http.SameSiteStrictMode))
		Expect(ck.Path).To(Equal("/"))
		Expect(ck.Domain).To(BeEmpty())
		Expect(c.csrf).NotTo(BeEmpty())
		Expect(c.me["user"]).To(HaveKeyWithValue("email", email))
		Expect(c.me["projects"]).To(ConsistOf(SatisfyAll(HaveKeyWithValue("id", t.ProjectID), HaveKeyWithValue("role", "owner"))))
		Expect(c.get("/me").JSON()).To(HaveKeyWithValue("csrf_token", c.csrf))
		Expect(r.Header.Get("Content-Security-Policy")).To(ContainSubstring("frame-ancestors 'none'"))
		Expect(r.Header.Get("X-Frame-Options")).To(Equal("DENY"))
		Expect(r.Header.Get("Cache-Control")).To(Equal("no-store"))
	})

	It("refuses a wrong password and an unknown email alike", func() {
		c := newConsoleClient()
		wrong := c.login(email, "not the password at all", "")
		Expect(wrong).To(HaveError(http.StatusUnauthorized, "invalid_credentials"))
		unknown := c.login("nobody@example.com", consolePassword, "")
		Expect(unknown).To(HaveError(http.StatusUnauthorized, "invalid_credentials"))
		Expect(unknown.JSON()["error"].(map[string]any)["message"]).To(Equal(wrong.JSON()["error"].(map[string]any)["message"]))
		Expect(c.cookie).To(BeEmpty())
	})

	It("locks a user after five failed sign-ins in a row, even against the right password, until the lockout ends", func() {
		c := newConsoleClient()
		for range 4 {
			Expect(c.login(email, "wrong password!!", "")).To(HaveError(http.StatusUnauthorized, "invalid_credentials"))
		}
		Expect(c.login(email, "wrong password!!", "")).To(HaveError(http.StatusTooManyRequests, "login_locked"))
		Expect(c.login(email, consolePassword, "")).To(HaveError(http.StatusTooManyRequests, "login_locked"))
		Expect(auditActionsOfUser(email)).To(ContainElement("user.locked"))

		clock.Advance(15*time.Minute + time.Second)
		Expect(c.login(email, consolePassword, "")).To(HaveStatus(http.StatusOK))
	})

	It("counts failures in a row: a success starts the count again", func() {
		c := newConsoleClient()
		for range 4 {
			Expect(c.login(email, "wrong password!!", "")).To(HaveStatus(http.StatusUnauthorized))
		}
		Expect(c.login(email, consolePassword, "")).To(HaveStatus(http.StatusOK))
		for range 4 {
			Expect(c.login(email, "wrong password!!", "")).To(HaveStatus(http.StatusUnauthorized))
		}
		Expect(c.login(email, consolePassword, "")).To(HaveStatus(http.StatusOK))
	})

	It("limits sign-in attempts per client address", func() {
		c := newConsoleClient()
		for i := range 10 {
			Expect(c.login("nobody@example.com", "whatever it is", "")).To(HaveStatus(http.StatusUnauthorized), "attempt %d", i+1)
		}
		r := c.login(email, consolePassword, "")
		Expect(r).To(HaveError(http.StatusTooManyRequests, "rate_limited"))
		Expect(r.Header.Get("Retry-After")).NotTo(BeEmpty())
		Expect(signIn(email).cookie).NotTo(BeEmpty(), "another address is not limited")
	})

	It("refuses a sign-in posted from another site", func() {
		c := newConsoleClient()
		Expect(c.do(http.MethodPost, "/login", map[string]any{"email": email, "password": consolePassword},
			"Origin", "https://evil.example")).To(HaveError(http.StatusForbidden, "csrf_failed"))
		Expect(c.do(http.MethodPost, "/login", map[string]any{"email": email, "password": consolePassword},
			"Sec-Fetch-Site", "cross-site")).To(HaveError(http.StatusForbidden, "csrf_failed"))
		Expect(c.do(http.MethodPost, "/login", "email=a&password=b", "Content-Type", "application/x-www-form-urlencoded")).
			To(HaveStatus(http.StatusUnsupportedMediaType))
	})

	It("answers malformed sign-ins with the error envelope", func() {
		c := newConsoleClient()
		Expect(c.do(http.MethodPost, "/login", `{"email":`)).To(HaveError(http.StatusBadRequest, "invalid_json"))
		Expect(c.do(http.MethodPost, "/login", map[string]any{"email": email, "password": 5})).To(HaveFieldError("password"))
		Expect(c.do(http.MethodPost, "/login", map[string]any{"email": email, "pass": "x"})).To(HaveFieldError("pass"))
		Expect(c.do(http.MethodPost, "/login", `{"email":"a\u0000b@example.com","password":"x"}`)).To(HaveFieldError("body"))
	})

	It("makes a user with a one-time password choose their own before anything else", func() {
		owner := signIn(email)
		r := owner.post("/projects/"+t.ProjectID+"/members", map[string]any{"email": "New.Person@Example.com", "role": "developer"})
		Expect(r).To(HaveStatus(http.StatusCreated))
		otp, _ := r.JSON()["one_time_password"].(string)
		Expect(otp).To(MatchRegexp(`^[a-z2-7]{5}(-[a-z2-7]{5}){3}$`))

		c := newConsoleClient()
		Expect(c.login("new.person@example.com", otp, "")).To(HaveStatus(http.StatusOK))
		Expect(c.me["user"]).To(HaveKeyWithValue("password_change_required", true))
		Expect(c.get("/projects/" + t.ProjectID + "/keys")).To(HaveError(http.StatusForbidden, "password_change_required"))
		Expect(c.post("/me/password", map[string]any{"current_password": otp, "new_password": "short"})).To(HaveFieldError("new_password"))
		Expect(c.post("/me/password", map[string]any{"current_password": "wrong", "new_password": "a much longer password"})).
			To(HaveFieldError("current_password"))
		Expect(c.post("/me/password", map[string]any{"current_password": otp, "new_password": "a much longer password"})).
			To(HaveStatus(http.StatusNoContent))
		Expect(c.get("/projects/" + t.ProjectID + "/keys")).To(HaveStatus(http.StatusOK))
		Expect(newConsoleClient().login("new.person@example.com", otp, "")).To(HaveStatus(http.StatusUnauthorized))
	})

	Describe("with TOTP", func() {
		It("enrols an authenticator, then asks for its code at sign-in and accepts each code once", func() {
			c := signIn(email)
			setup := c.post("/me/totp", nil)
			Expect(setup).To(HaveStatus(http.StatusOK))
			secret := setup.JSON()["secret"].(string)
			Expect(setup.JSON()["otpauth_url"]).To(HavePrefix("otpauth://totp/Switchboard:"))
			Expect(setup.JSON()["qr_code"]).To(HavePrefix("data:image/png;base64,"))
			Expect(c.post("/me/totp/confirm", map[string]any{"code": "000000"})).To(HaveFieldError("code"))
			code, err := totp.GenerateCode(secret, clock.Now())
			Expect(err).NotTo(HaveOccurred())
			Expect(c.post("/me/totp/confirm", map[string]any{"code": code})).To(HaveStatus(http.StatusNoContent))
			Expect(c.get("/me").JSON()["user"]).To(HaveKeyWithValue("totp_enabled", true))

			b := newConsoleClient()
			Expect(b.login(email, consolePassword, "")).To(HaveError(http.StatusUnauthorized, "totp_required"))
			Expect(b.login(email, consolePassword, code)).To(HaveError(http.StatusUnauthorized, "invalid_totp"), "a code is accepted once")
			clock.Advance(30 * time.Second)
			next, err := totp.GenerateCode(secret, clock.Now())
			Expect(err).NotTo(HaveOccurred())
			Expect(b.login(email, consolePassword, next)).To(HaveStatus(http.StatusOK))

			Expect(c.post("/me/totp/disable", map[string]any{"password": "wrong"})).To(HaveFieldError("password"))
			Expect(c.post("/me/totp/disable", map[string]any{"password": consolePassword})).To(HaveStatus(http.StatusNoContent))
			Expect(signIn(email).cookie).NotTo(BeEmpty())
		})
	})
})

var _ = Describe("Console sessions", func() {
	var (
		t     *tenant
		email string
		c     *consoleClient
	)
	BeforeEach(func() {
		t = newTenant()
		email = newConsoleUser(t.ProjectID, store.RoleOwner)
		c = signIn(email)
	})
	keys := func(c *consoleClient) *response { return c.get("/projects/" + t.ProjectID + "/keys") }

	It("refuses a request without a session, or with a made-up one", func() {
		Expect(newConsoleClient().get("/me")).To(HaveError(http.StatusUnauthorized, "unauthenticated"))
		forged := newConsoleClient()
		forged.cookie = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		Expect(forged.get("/me")).To(HaveError(http.StatusUnauthorized, "unauthenticated"))
	})

	It("expires a session 12 hours after sign-in, however busy", func() {
		for range 6 {
			clock.Advance(110 * time.Minute)
			Expect(keys(c)).To(HaveStatus(http.StatusOK))
		}
		clock.Advance(70 * time.Minute)
		r := keys(c)
		Expect(r).To(HaveError(http.StatusUnauthorized, "session_expired"))
		Expect(r.Header.Get("Set-Cookie")).To(ContainSubstring("Max-Age=0"))
	})

	It("expires a session idle for 2 hours", func() {
		clock.Advance(119 * time.Minute)
		Expect(keys(c)).To(HaveStatus(http.StatusOK))
		clock.Advance(2 * time.Hour)
		Expect(keys(c)).To(HaveError(http.StatusUnauthorized, "session_expired"))
	})

	It("signs out: the cookie no longer works", func() {
		Expect(c.post("/logout", nil)).To(HaveStatus(http.StatusNoContent))
		Expect(keys(c)).To(HaveError(http.StatusUnauthorized, "unauthenticated"))
	})

	It("lists the user's sessions and revokes another one", func() {
		other := signIn(email)
		r := c.get("/me/sessions")
		Expect(r).To(HaveStatus(http.StatusOK))
		var sessions struct {
			Data []struct {
				ID        string `json:"id"`
				IP        string `json:"ip"`
				UserAgent string `json:"user_agent"`
				Current   bool   `json:"current"`
			} `json:"data"`
		}
		r.Into(&sessions)
		Expect(sessions.Data).To(HaveLen(2))
		var otherID string
		for _, s := range sessions.Data {
			Expect(s.UserAgent).To(Equal("console-spec/1.0"))
			if !s.Current {
				otherID = s.ID
				Expect(s.IP).To(Equal(other.ip))
			}
		}
		Expect(otherID).NotTo(BeEmpty())
		Expect(c.do(http.MethodDelete, "/me/sessions/"+otherID, nil)).To(HaveStatus(http.StatusNoContent))
		Expect(keys(other)).To(HaveError(http.StatusUnauthorized, "unauthenticated"))
		Expect(keys(c)).To(HaveStatus(http.StatusOK))
		Expect(c.do(http.MethodDelete, "/me/sessions/"+otherID, nil)).To(HaveError(http.StatusNotFound, "not_found"))
		stranger := signIn(newConsoleUser(t.ProjectID, store.RoleViewer))
		Expect(stranger.do(http.MethodDelete, "/me/sessions/"+c.me["user"].(map[string]any)["id"].(string), nil)).
			To(HaveError(http.StatusNotFound, "not_found"))
	})

	It("signs the user's other sessions out when they change their password", func() {
		other := signIn(email)
		Expect(c.post("/me/password", map[string]any{"current_password": consolePassword, "new_password": "another long password"})).
			To(HaveStatus(http.StatusNoContent))
		Expect(keys(other)).To(HaveError(http.StatusUnauthorized, "unauthenticated"))
		Expect(keys(c)).To(HaveStatus(http.StatusOK))
	})

	Describe("CSRF protection", func() {
		create := func(headers ...string) *response {
			return c.do(http.MethodPost, "/projects/"+t.ProjectID+"/keys", map[string]any{}, headers...)
		}
		It("refuses a change without the session's token, with another session's, or from another origin", func() {
			Expect(create(server.CSRFHeader, "")).To(HaveError(http.StatusForbidden, "csrf_failed"))
			Expect(create(server.CSRFHeader, signIn(email).csrf)).To(HaveError(http.StatusForbidden, "csrf_failed"))
			Expect(create("Origin", "https://evil.example")).To(HaveError(http.StatusForbidden, "csrf_failed"))
			Expect(create("Sec-Fetch-Site", "same-site")).To(HaveError(http.StatusForbidden, "csrf_failed"))
			keys, err := st.ListAPIKeys(context.Background(), t.ProjectID)
			Expect(err).NotTo(HaveOccurred())
			Expect(keys).To(HaveLen(1), "only the tenant's own key")
			Expect(create()).To(HaveStatus(http.StatusCreated))
		})
		It("refuses a change through the public API bridge without the token", func() {
			Expect(c.do(http.MethodPost, "/projects/"+t.ProjectID+"/api/accounts", map[string]any{"name": "Forged"},
				server.CSRFHeader, "")).To(HaveError(http.StatusForbidden, "csrf_failed"))
		})
	})
})

// auditActionsOfUser lists the actions of the audit entries about a user's own sign-in.
func auditActionsOfUser(email string) []string {
	u, err := st.ConsoleUserByEmail(context.Background(), service.NormalizeEmail(email))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	es, _, err := st.ListUserAudit(context.Background(), u.ID, store.Page{Limit: 100})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Action
	}
	return out
}
