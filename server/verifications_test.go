package server_test

import (
	"net/http"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var sixDigits = regexp.MustCompile(`\b\d{6}\b`)

// receivedCode waits for the verification code a handset received and returns it: tests read it
// as the handset does, from the simulated carrier's outbox.
func receivedCode(handset string) string {
	var code string
	EventuallyWithOffset(1, func() string {
		for _, e := range outbox(handset) {
			if m := sixDigits.FindString(e.Body); m != "" {
				code = m
			}
		}
		return code
	}).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).ShouldNot(BeEmpty())
	return code
}

// startVerification creates a verification for a new handset and returns it with the code.
func (t *tenant) startVerification(account string) (v map[string]any, handset, code string) {
	handset = newHandset()
	r := t.post("/accounts/"+account+"/verifications", map[string]any{"phone_number": handset})
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
	v = r.JSON()
	return v, handset, receivedCode(handset)
}

// check posts a code and returns the response.
func (t *tenant) check(id, code string) *response {
	return t.post("/verifications/"+id+"/checks", map[string]any{"code": code})
}

// wrong returns a 6-digit code other than code.
func wrong(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}

var _ = Describe("Verifications", func() {
	var (
		t    *tenant
		acct string
	)
	BeforeEach(func() {
		t = newTenant()
		acct = t.createAccount("Acme Dental")
	})

	It("sends a 6-digit code from the demo number, answers 201 pending, and never shows the code", func() {
		v, handset, code := t.startVerification(acct)
		Expect(v).To(SatisfyAll(HaveKeyWithValue("id", MatchRegexp(`^vfn_[0-7][0-9a-hjkmnp-tv-z]{25}$`)),
			HaveKeyWithValue("phone_number", handset), HaveKeyWithValue("status", "pending"),
			HaveKeyWithValue("attempt_count", BeNumerically("==", 0))))
		created, err := time.Parse(time.RFC3339Nano, v["created_at"].(string))
		Expect(err).NotTo(HaveOccurred())
		expires, err := time.Parse(time.RFC3339Nano, v["expires_at"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(expires.Sub(created)).To(Equal(10 * time.Minute))

		entries := outbox(handset)
		Expect(entries).To(HaveLen(1))
		Expect(entries[0].From).To(Equal("+18335550000"))
		Expect(entries[0].Body).To(ContainSubstring(code))

		got := t.get("/verifications/" + v["id"].(string))
		Expect(got).To(HaveStatus(http.StatusOK))
		Expect(string(got.Body)).NotTo(ContainSubstring(code))
		Expect(got.JSON()).To(Equal(v))
		checked := t.check(v["id"].(string), wrong(code))
		Expect(string(checked.Body)).NotTo(ContainSubstring(code))
	})

	It("stores the code only hashed: no column of the verification and no job holds it in clear", func() {
		v, _, code := t.startVerification(acct)
		var row struct {
			CodeHash []byte
		}
		Expect(st.DB().Raw(`SELECT code_hash FROM verifications WHERE id = ?`, v["id"]).Scan(&row).Error).To(Succeed())
		Expect(row.CodeHash).To(HaveLen(32))
		Expect(string(row.CodeHash)).NotTo(ContainSubstring(code))
		var args []string
		Expect(st.DB().Raw(`SELECT CAST(args AS TEXT) FROM river_job WHERE kind = 'verification_send'`).Scan(&args).Error).To(Succeed())
		Expect(args).NotTo(BeEmpty())
		for _, a := range args {
			Expect(a).NotTo(ContainSubstring(code))
		}
	})

	type step struct {
		code   func(right string) string
		result string
		status string
	}
	right := func(c string) string { return c }
	DescribeTable("checks codes",
		func(advance time.Duration, steps ...step) {
			v, _, code := t.startVerification(acct)
			if advance > 0 {
				clock.Advance(advance)
			}
			id := v["id"].(string)
			for i, s := range steps {
				r := t.check(id, s.code(code))
				Expect(r).To(HaveStatus(http.StatusOK), "check %d: %s", i+1, r.String())
				out := r.JSON()
				Expect(out).To(HaveKeyWithValue("result", s.result), "check %d", i+1)
				Expect(out["verification"]).To(SatisfyAll(HaveKeyWithValue("status", s.status),
					HaveKeyWithValue("attempt_count", BeNumerically("==", i+1))), "check %d", i+1)
			}
			Expect(t.get("/verifications/" + id).JSON()).To(SatisfyAll(
				HaveKeyWithValue("status", steps[len(steps)-1].status),
				HaveKeyWithValue("attempt_count", BeNumerically("==", len(steps)))))
		},
		Entry("the right code: ok, verified", time.Duration(0), step{right, "ok", "verified"}),
		Entry("a wrong code, then the right one", time.Duration(0),
			step{wrong, "incorrect", "pending"}, step{right, "ok", "verified"}),
		Entry("two wrong codes, then the right one", time.Duration(0),
			step{wrong, "incorrect", "pending"}, step{wrong, "incorrect", "pending"}, step{right, "ok", "verified"}),
		Entry("three wrong codes exhaust it; even the right code is then refused", time.Duration(0),
			step{wrong, "incorrect", "pending"}, step{wrong, "incorrect", "pending"}, step{wrong, "exhausted", "exhausted"},
			step{right, "exhausted", "exhausted"}),
		Entry("after 10 minutes the right code is expired", 10*time.Minute,
			step{right, "expired", "expired"}, step{right, "expired", "expired"}),
		Entry("just before 10 minutes the right code is ok", 10*time.Minute-5*time.Second, step{right, "ok", "verified"}),
	)

	It("shows a pending verification past its expiry as expired", func() {
		v, _, _ := t.startVerification(acct)
		clock.Advance(10*time.Minute + time.Second)
		Expect(t.get("/verifications/" + v["id"].(string)).JSON()).To(HaveKeyWithValue("status", "expired"))
	})

	It("answers 200 already_verified to a check of a verified verification, counting no attempt", func() {
		v, _, code := t.startVerification(acct)
		id := v["id"].(string)
		Expect(t.check(id, code).JSON()).To(HaveKeyWithValue("result", "ok"))
		for _, c := range []string{code, wrong(code)} {
			r := t.check(id, c)
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("result", "already_verified"),
				HaveKeyWithValue("verification", SatisfyAll(HaveKeyWithValue("status", "verified"),
					HaveKeyWithValue("attempt_count", BeNumerically("==", 1))))))
		}
		Expect(t.get("/verifications/" + id).JSON()).To(HaveKeyWithValue("attempt_count", BeNumerically("==", 1)))
	})

	Describe("without an account (POST /verifications, as Surge SDKs up to 0.44 call it)", func() {
		It("sends the code from the verification sender, answers 201 pending, and checks it as any other", func() {
			handset := newHandset()
			r := t.post("/verifications", map[string]any{"phone_number": handset})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			v := r.JSON()
			Expect(v).To(SatisfyAll(HaveKeyWithValue("phone_number", handset), HaveKeyWithValue("status", "pending"),
				HaveKeyWithValue("attempt_count", BeNumerically("==", 0))))
			code := receivedCode(handset)
			Expect(outbox(handset)[0].From).To(Equal("+18335550000"))
			id := v["id"].(string)
			Expect(t.get("/verifications/" + id).JSON()).To(Equal(v))
			Expect(t.check(id, wrong(code)).JSON()).To(HaveKeyWithValue("result", "incorrect"))
			Expect(t.check(id, code).JSON()).To(HaveKeyWithValue("result", "ok"))
			Expect(t.check(id, code).JSON()).To(HaveKeyWithValue("result", "already_verified"))
			var account *string
			Expect(st.DB().Raw(`SELECT account_id FROM verifications WHERE id = ?`, id).Row().Scan(&account)).To(Succeed())
			Expect(account).To(BeNil(), "the verification belongs to the project, not to an account")
		})

		It("keeps it from other projects and refuses a malformed number", func() {
			r := t.post("/verifications", map[string]any{"phone_number": newHandset()})
			Expect(r).To(HaveStatus(http.StatusCreated))
			o := newTenant()
			Expect(o.get("/verifications/" + r.JSON()["id"].(string))).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.post("/verifications", map[string]any{"phone_number": "4155550123"})).To(HaveFieldError("phone_number"))
			Expect(t.post("/verifications", map[string]any{})).To(HaveFieldError("phone_number"))
		})
	})

	It("counts concurrent checks one by one: three wrong codes at once exhaust it exactly", func() {
		v, _, code := t.startVerification(acct)
		id := v["id"].(string)
		results := make(chan string, 5)
		for range 5 {
			go func() {
				defer GinkgoRecover()
				r := t.check(id, wrong(code))
				results <- r.JSON()["result"].(string)
			}()
		}
		var got []string
		for range 5 {
			got = append(got, <-results)
		}
		Expect(got).To(ConsistOf("incorrect", "incorrect", "exhausted", "exhausted", "exhausted"))
		Expect(t.get("/verifications/" + id).JSON()).To(SatisfyAll(HaveKeyWithValue("status", "exhausted"),
			HaveKeyWithValue("attempt_count", BeNumerically("==", 5))))
	})

	DescribeTable("refuses a malformed request with 422 validation_error",
		func(path func(id string) string, body map[string]any, field string) {
			v, _, _ := t.startVerification(acct)
			Expect(t.post(strings.ReplaceAll(path(v["id"].(string)), "{acct}", acct), body)).To(HaveFieldError(field))
		},
		Entry("a number not in E.164", func(string) string { return "/accounts/{acct}/verifications" }, map[string]any{"phone_number": "4155550123"}, "phone_number"),
		Entry("no number", func(string) string { return "/accounts/{acct}/verifications" }, map[string]any{}, "phone_number"),
		Entry("a 5-digit code", func(id string) string { return "/verifications/" + id + "/checks" }, map[string]any{"code": "12345"}, "code"),
		Entry("a code with letters", func(id string) string { return "/verifications/" + id + "/checks" }, map[string]any{"code": "12a456"}, "code"),
	)

	It("answers 404 for another project's account, verification or check", func() {
		v, _, code := t.startVerification(acct)
		o := newTenant()
		Expect(o.post("/accounts/"+acct+"/verifications", map[string]any{"phone_number": newHandset()})).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(o.get("/verifications/" + v["id"].(string))).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(o.check(v["id"].(string), code)).To(HaveError(http.StatusNotFound, "not_found"))
		Expect(t.get("/verifications/" + v["id"].(string)).JSON()).To(HaveKeyWithValue("attempt_count", BeNumerically("==", 0)))
		Expect(t.get("/verifications/" + store.NewID("vfn"))).To(HaveError(http.StatusNotFound, "not_found"))
	})

	It("refuses an archived account with 422 account_archived", func() {
		Expect(t.delete("/accounts/" + acct)).To(HaveStatus(http.StatusOK))
		Expect(t.post("/accounts/"+acct+"/verifications", map[string]any{"phone_number": newHandset()})).
			To(HaveError(http.StatusUnprocessableEntity, "account_archived"))
	})
})
