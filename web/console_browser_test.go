package web_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/security"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// The operator console in Chromium, over TLS as it is served (its session cookie is Secure and
// its API checks the Origin), against the suite's database and simulated carrier: an owner and a
// viewer of one project, one browser profile each.
var _ = Describe("The operator console", Ordered, func() {
	const password = "correct horse battery staple"
	var (
		consoleURL string
		client     *http.Client
		project    string
		account    string
		number     string
		owner      context.Context
		secret     string
		rcv        *hookReceiver
		s          *scene
		// patient is the handset the first message goes to: its conversation is the one the
		// accounts spec reads.
		patient string
	)

	BeforeAll(func(ctx context.Context) {
		api, err := server.New(server.Config{Core: core, Logger: slog.New(slog.DiscardHandler), RateLimit: -1, Now: clock.Now})
		Expect(err).NotTo(HaveOccurred())
		srv := httptest.NewUnstartedServer(api)
		srv.StartTLS()
		DeferCleanup(srv.Close)
		consoleURL = srv.URL
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test server's own certificate

		s = newScene()
		project, account, number = s.project, s.account, s.number
		patient = handset()
		Expect(st.DB().Exec("UPDATE projects SET name = ? WHERE id = ?", "Acme Health", project).Error).To(Succeed())
		for _, u := range []struct{ email, role string }{{"owner@acme.test", store.RoleOwner}, {"viewer@acme.test", store.RoleViewer}} {
			_, otp, err := core.Console.AddMember(ctx, service.CLIActor("spec"), project, u.email, u.role)
			Expect(err).NotTo(HaveOccurred())
			hash, err := service.HashPassword(password)
			Expect(err).NotTo(HaveOccurred())
			Expect(otp).NotTo(BeEmpty())
			Expect(st.DB().Exec("UPDATE console_users SET password_hash = ?, password_one_time = ? WHERE email = ?", hash, false, u.email).Error).To(Succeed())
		}
		rcv = newHookReceiver()
		owner = signedIn(consoleURL, "owner@acme.test", password)
	})

	// A failed spec leaves a screenshot of the owner's tab, to see what the page showed.
	AfterEach(func() {
		if CurrentSpecReport().Failed() && owner != nil {
			screenshot(owner, "console-failed")
		}
	})

	// page opens a console path in a tab and waits for its heading.
	page := func(tab context.Context, path, heading string) {
		Expect(chromedp.Do(tab, chromedp.Navigate(consoleURL+path))).To(Succeed())
		waitFor(tab, fmt.Sprintf(`[...document.querySelectorAll('h1')].some(h => h.textContent === %q)`, heading))
	}

	It("shows the sign-in page", func() {
		tab := consoleTab(false)
		Expect(chromedp.Do(tab, chromedp.Navigate(consoleURL+"/console/"))).To(Succeed())
		waitFor(tab, `!!document.querySelector('[data-testid=login-form]')`)
		screenshot(tab, "console-sign-in")
	})

	It("lets an owner create a key whose secret shows once and works against the API, and shows its requests in the API log", func() {
		page(owner, "/console/p/"+project+"/keys", "API keys")
		Expect(chromedp.Do(owner, chromedp.Click(chromedp.CSS(`[data-testid=create-key]`)))).To(Succeed())
		waitFor(owner, `!!document.querySelector('[data-testid=new-key-secret]')`)
		secret = text(owner, `[data-testid=new-key-secret]`)
		Expect(secret).To(MatchRegexp(`^sk_live_[A-Z2-7]{52}$`))
		screenshot(owner, "console-key-created")
		Expect(chromedp.Do(owner, chromedp.Click(chromedp.CSS(`.cx-modal-footer .cx-btn-primary`)))).To(Succeed())
		waitFor(owner, `!document.querySelector('[data-testid=new-key-secret]')`)
		var body string
		body = text(owner, `main`)
		Expect(body).NotTo(ContainSubstring(secret), "the secret is not shown again")

		// The key works: two messages (1 and 2 segments) that the usage page shows later.
		for i, text := range []string{"Your appointment is confirmed.", strings.Repeat("Please bring your insurance card. ", 5)} {
			to := patient
			if i > 0 {
				to = handset()
			}
			r := apiCall(client, consoleURL, secret, http.MethodPost, "/accounts/"+account+"/messages",
				map[string]any{"to": to, "from": number, "body": text})
			Expect(r.status).To(Equal(http.StatusCreated), r.body)
		}
		Expect(apiCall(client, consoleURL, secret, http.MethodGet, "/accounts/acct_00000000000000000000000000", nil).status).To(Equal(http.StatusNotFound))

		page(owner, "/console/p/"+project+"/logs", "API logs")
		waitFor(owner, `document.querySelectorAll('[data-log]').length >= 3`)
		body = text(owner, `main table`)
		Expect(body).To(ContainSubstring("/accounts/" + account + "/messages"))
		Expect(body).To(ContainSubstring(secret[len(secret)-4:]), "the key's hint")
		screenshot(owner, "console-api-logs")
		Expect(chromedp.Do(owner, chromedp.SetValue(chromedp.CSS(`[data-testid=filter-status]`), "4xx"),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=filter-status]').dispatchEvent(new Event('change', {bubbles: true}))`))).To(Succeed())
		waitFor(owner, `document.querySelectorAll('[data-log]').length === 1`)
		Expect(chromedp.Do(owner, chromedp.Click(chromedp.CSS(`[data-log]`)))).To(Succeed())
		waitFor(owner, `!!document.querySelector('.cx-modal') && document.querySelector('.cx-modal').textContent.includes('not_found')`)
		screenshot(owner, "console-api-log-detail")
	})

	It("sets a webhook to a local receiver, sends a test event, shows the delivery, and rotates the secret", func() {
		page(owner, "/console/p/"+project+"/webhooks", "Webhooks")
		Expect(chromedp.Do(owner, chromedp.Click(chromedp.CSS(`[data-testid=add-endpoint]`)),
			chromedp.SendKeys(chromedp.CSS(`input[name=url]`), rcv.url()),
			chromedp.Click(chromedp.CSS(`[data-testid=save-endpoint]`)))).To(Succeed())
		waitFor(owner, `!!document.querySelector('[data-testid=endpoint-secret]')`)
		var first string
		first = text(owner, `[data-testid=endpoint-secret]`)
		Expect(first).To(HavePrefix("whsec_"))
		Expect(chromedp.Do(owner, chromedp.Click(chromedp.CSS(`.cx-modal-header .cx-icon-btn`)))).To(Succeed())

		Expect(chromedp.Do(owner, chromedp.Click(chromedp.CSS(`[data-testid=send-test]`)), chromedp.Click(chromedp.CSS(`[data-testid=confirm-test]`)))).To(Succeed())
		Eventually(rcv.count).WithTimeout(20 * time.Second).Should(Equal(1))
		// The delivery can reach the receiver before the console has the test's answer and closes
		// its dialog: wait for the page itself before clicking on it.
		waitFor(owner, `!document.querySelector('.cx-modal')`)
		waitFor(owner, `[...document.querySelectorAll('[data-delivery]')].some(r => r.textContent.includes('succeeded'))`)
		screenshot(owner, "console-webhooks")

		Expect(chromedp.Do(owner, chromedp.Click(chromedp.CSS(`[data-testid=rotate-secret]`)))).To(Succeed())
		waitFor(owner, `!!document.querySelector('[data-testid=endpoint-secret]') && document.querySelector('.cx-modal').textContent.includes('previous secret')`)
		var second string
		second = text(owner, `[data-testid=endpoint-secret]`)
		Expect(second).To(SatisfyAll(HavePrefix("whsec_"), Not(Equal(first))))
		screenshot(owner, "console-webhook-rotated")
		Expect(chromedp.Do(owner, chromedp.Click(chromedp.CSS(`.cx-modal-header .cx-icon-btn`)))).To(Succeed())

		// The next delivery is signed with both secrets during the overlap.
		Expect(chromedp.Do(owner, chromedp.Click(chromedp.CSS(`[data-testid=send-test]`)), chromedp.Click(chromedp.CSS(`[data-testid=confirm-test]`)))).To(Succeed())
		Eventually(rcv.count).WithTimeout(20 * time.Second).Should(Equal(2))
		Expect(strings.Fields(rcv.last().Get("webhook-signature"))).To(HaveLen(2))
		waitFor(owner, `!document.querySelector('.cx-modal') && document.querySelectorAll('[data-delivery]').length >= 2`)
		Expect(chromedp.Do(owner, chromedp.Click(chromedp.CSS(`[data-delivery]`)))).To(Succeed())
		waitFor(owner, `!!document.querySelector('.cx-modal .cx-pre')`)
		screenshot(owner, "console-delivery")
	})

	It("shows the usage of the messages sent, in segments", func() {
		page(owner, "/console/p/"+project+"/usage", "Usage")
		waitFor(owner, `[...document.querySelectorAll('[data-testid=segments-outbound]')].some(c => c.textContent === '3')`)
		screenshot(owner, "console-usage")
	})

	It("shows accounts with their numbers, campaigns, conversations and blasts", func() {
		tollFree(project, account)
		page(owner, "/console/p/"+project+"/accounts", "Accounts")
		screenshot(owner, "console-accounts")
		page(owner, "/console/p/"+project+"/accounts/"+account+"?tab=campaigns", "Acme Dental")
		waitFor(owner, `[...document.querySelectorAll('[data-campaign]')].some(r => r.textContent.includes('in review'))`)
		Expect(chromedp.Do(owner, chromedp.Evaluate[chromedp.Void](`window.prompt = () => 'Sample messages lack opt-out language'`))).To(Succeed())
		Expect(chromedp.Do(owner, chromedp.Click(chromedp.CSS(`[data-campaign] .cx-btn-ghost`)))).To(Succeed())
		waitFor(owner, `[...document.querySelectorAll('[data-campaign]')].some(r => r.textContent.includes('Sample messages lack opt-out language'))`)
		screenshot(owner, "console-campaigns")

		By("showing a conversation read-only, in the inbox's own list and thread, its bodies as text")
		const html = `<img src=x onerror="document.title='pwned'">`
		s.texts(patient, html)
		page(owner, "/console/p/"+project+"/accounts/"+account+"?tab=conversations", "Acme Dental")
		inbox := `document.querySelector('[data-testid=conversations]')`
		waitFor(owner, `!!`+rowOf(patient))
		Expect(chromedp.Do(owner, chromedp.Evaluate[chromedp.Void](rowOf(patient)+`.click()`))).To(Succeed())
		thread := inbox + `.querySelectorAll('.sb-conv .sb-msg')`
		waitFor(owner, `[...`+thread+`].some((m) => m.querySelector('.sb-bubble-text')?.textContent === 'Your appointment is confirmed.' && m.textContent.includes('1 segment'))`)
		waitFor(owner, `[...`+thread+`].some((m) => m.classList.contains('sb-msg-in') && m.querySelector('.sb-bubble-text')?.textContent === `+"`"+html+"`"+`)`)
		Expect(evaluate[string](owner, inbox+`.querySelector('.sb-conv .sb-conv-name').textContent`)).To(ContainSubstring("Read-only"))
		Expect(evaluate[int](owner, inbox+`.querySelectorAll('.sb-composer, .sb-composer-off, textarea, form, [aria-label=Send]').length`)).
			To(BeZero(), "no composer in a read-only thread")
		Expect(evaluate[int](owner, inbox+`.querySelectorAll('.sb-bubble img').length`)).To(BeZero(), "a body is text, never HTML")
		Expect(evaluate[string](owner, `document.title`)).NotTo(Equal("pwned"))
		screenshot(owner, "console-conversations")

		By("showing the thread alone when narrow, with a way back to the list")
		Expect(chromedp.Do(owner, chromedp.EmulateViewport(640, 900))).To(Succeed())
		DeferCleanup(func() { Expect(chromedp.Do(owner, chromedp.EmulateViewport(1360, 900))).To(Succeed()) })
		waitFor(owner, inbox+`.querySelector('.sb-inbox-narrow') && !`+inbox+`.querySelector('.sb-list-pane') && !!`+inbox+`.querySelector('.sb-conv')`)
		screenshot(owner, "console-conversations-narrow")
		Expect(chromedp.Do(owner, chromedp.Click(chromedp.CSS(`[data-testid=conversations] [aria-label="Back to the inbox"]`)))).To(Succeed())
		waitFor(owner, `!!`+inbox+`.querySelector('.sb-list-pane') && !`+inbox+`.querySelector('.sb-conv')`)
		Expect(chromedp.Do(owner, chromedp.Evaluate[chromedp.Void](rowOf(patient)+`.click()`))).To(Succeed())
		waitFor(owner, `!!`+inbox+`.querySelector('.sb-conv .sb-bubble-text')`)
	})

	It("shows the project's audit log", func() {
		page(owner, "/console/p/"+project+"/audit", "Audit log")
		waitFor(owner, `document.querySelector('main table').textContent.includes('api_key.create')`)
		screenshot(owner, "console-audit")
	})

	It("lets a viewer see but not press the buttons, and the server refuses the request when forced", func() {
		viewer := signedIn(consoleURL, "viewer@acme.test", password)
		page(viewer, "/console/p/"+project+"/keys", "API keys")
		Expect(evaluate[bool](viewer, `document.querySelector('[data-testid=create-key]').disabled`)).To(BeTrue())
		Expect(evaluate[string](viewer, `document.querySelector('[data-testid=create-key]').title`)).To(ContainSubstring("viewer"))
		waitFor(viewer, `document.querySelectorAll('[data-key]').length >= 1`)
		screenshot(viewer, "console-viewer-keys")
		status, err := chromedp.Run(viewer, chromedp.Evaluate[int](`(async () => {
			const me = await (await fetch('/console/api/me')).json()
			const r = await fetch('/console/api/projects/`+project+`/keys', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': me.csrf_token}, body: '{}'})
			return r.status
		})()`, chromedp.EvalAwaitPromise))
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(http.StatusForbidden))
	})
})

// consoleTab opens a tab in a browser profile of its own (its own cookies) that accepts the test
// server's certificate.
func consoleTab(_ bool) context.Context {
	tab, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	DeferCleanup(cancel)
	ignoreCertificates := func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, security.SetIgnoreCertificateErrors, security.SetIgnoreCertificateErrorsParams{Ignore: true})
		return chromedp.Void{}, err
	}
	Expect(chromedp.Do(tab, ignoreCertificates, chromedp.EmulateViewport(1360, 900))).To(Succeed())
	return tab
}

// signedIn is a tab of a new browser profile, signed in to the console as email.
func signedIn(consoleURL, email, password string) context.Context {
	tab := consoleTab(false)
	Expect(chromedp.Do(tab, chromedp.Navigate(consoleURL+"/console/"))).To(Succeed())
	waitFor(tab, `!!document.querySelector('[data-testid=login-form]')`)
	Expect(chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS(`input[name=email]`), email), chromedp.SendKeys(chromedp.CSS(`input[name=password]`), password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)))).To(Succeed())
	waitFor(tab, `!!document.querySelector('.cx-sidebar')`)
	return tab
}

type apiAnswer struct {
	status int
	body   string
}

// apiCall makes a request of the public API with an API key.
func apiCall(client *http.Client, base, key, method, path string, body any) apiAnswer {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, base+path, rd)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return apiAnswer{res.StatusCode, string(b)}
}

// hookReceiver is a local webhook endpoint that answers 204 and keeps the headers of each test
// event it receives (whose account id is all zeros); the events of the suite's real messages,
// which reach it too, are only counted apart.
type hookReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	tests []http.Header
	other int
}

func newHookReceiver() *hookReceiver {
	r := &hookReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var ev struct {
			AccountID string `json:"account_id"`
		}
		_ = json.NewDecoder(req.Body).Decode(&ev)
		r.mu.Lock()
		if strings.HasPrefix(ev.AccountID, "acct_") && strings.Trim(strings.TrimPrefix(ev.AccountID, "acct_"), "0") == "" {
			r.tests = append(r.tests, req.Header.Clone())
		} else {
			r.other++
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	DeferCleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) url() string { return r.srv.URL + "/hooks/switchboard" }

// count is the number of test events received.
func (r *hookReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.tests)
}

// last is the headers of the last test event received.
func (r *hookReceiver) last() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tests[len(r.tests)-1]
}

// tollFree gives the account a toll-free number whose verification the simulated carrier reviews.
func tollFree(project, account string) {
	ctx := context.Background()
	pn := &store.PhoneNumber{ProjectID: project, AccountID: &account, Number: fmt.Sprintf("+1833%07d", 5550100+seq.Add(1)%100),
		Type: store.NumberTollFree, Country: "US", Carrier: "sim"}
	Expect(st.InsertPhoneNumber(ctx, pn)).To(Succeed())
	Expect(st.CreateTollFreeCampaign(ctx, &store.TollFreeCampaign{ProjectID: project, AccountID: account, PhoneNumberID: pn.ID,
		Carrier: "sim", Status: store.CampaignInReview, Params: store.TollFreeParams{UseCases: []string{"account_notification"},
			Description: "Appointment reminders for Acme Dental patients", MessageSamples: []string{"Your appointment is tomorrow."},
			Includes: []string{}, PrivacyPolicyURL: "https://acme.test/privacy", TermsAndConditionsURL: "https://acme.test/terms"}})).To(Succeed())
}

// text is the text of the element sel selects in a tab.
func text(tab context.Context, sel string) string {
	t, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(sel)))
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), sel)
	return t
}
