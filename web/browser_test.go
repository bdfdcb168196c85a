package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/store"
)

// scene is one spec's tenant: a project that lets the host page frame its components, an
// account with a number that can send, and a user of it.
type scene struct {
	project, account, number, user string
}

var seq atomic.Int64

func newScene() *scene {
	ctx := context.Background()
	p, err := st.CreateProject(ctx, "browser "+CurrentSpecReport().LeafNodeText)
	Expect(err).NotTo(HaveOccurred())
	Expect(st.AddEmbedOrigin(ctx, p.ID, hostURL)).To(Succeed())
	a := &store.Account{ProjectID: p.ID, Name: "Acme Dental"}
	Expect(st.CreateAccount(ctx, a)).To(Succeed())
	s := &scene{project: p.ID, account: a.ID, number: fmt.Sprintf("+1999%07d", 5000000+seq.Add(1))}
	db := st.DB().WithContext(ctx)
	now := time.Now().UTC()
	cid, nid := store.NewID(store.PrefixCampaign), store.NewID(store.PrefixPhoneNumber)
	Expect(db.Exec(`INSERT INTO campaigns (id, project_id, account_id, carrier, status, params, created_at, updated_at)
		VALUES (?, ?, ?, 'sim', ?, '{}', ?, ?)`, cid, p.ID, a.ID, store.CampaignActive, now, now).Error).To(Succeed())
	Expect(db.Exec(`INSERT INTO phone_numbers (id, project_id, account_id, number, type, country, name, metadata, carrier,
		campaign_id, attachment_status, created_at, updated_at) VALUES (?, ?, ?, ?, 'local', 'US', 'Front desk', '{}', 'sim', ?, ?, ?, ?)`,
		nid, p.ID, a.ID, s.number, cid, store.AttachmentDone, now, now).Error).To(Succeed())
	u := &store.User{ProjectID: p.ID, AccountID: a.ID, FirstName: "Dana"}
	Expect(st.CreateUser(ctx, u)).To(Succeed())
	s.user = u.ID
	return s
}

// handset returns a phone number no other spec texts from.
func handset() string { return fmt.Sprintf("+1646%07d", 7000000+seq.Add(1)) }

// texts makes a handset send a message to the scene's number through the simulated carrier: the
// path `switchboard sim inbound` takes.
func (s *scene) texts(from, body string) {
	c, err := core.Carriers.Get(sim.Name)
	Expect(err).NotTo(HaveOccurred())
	_, err = c.(*sim.Carrier).Inbound(context.Background(), from, s.number, body, nil)
	Expect(err).NotTo(HaveOccurred())
}

// token mints a user token, valid for d, issued at the clock's now plus at.
func (s *scene) token(at time.Duration) string {
	clock.set(at)
	defer clock.set(0)
	tok, err := core.Tokens.Issue(context.Background(), s.user, s.account, 900)
	Expect(err).NotTo(HaveOccurred())
	return tok
}

// open opens the host page in a new tab, mounting the given components (comma-separated).
func (s *scene) open(mount string, extra ...string) context.Context {
	tab, cancel := chromedp.NewContext(browser)
	DeferCleanup(cancel)
	q := url.Values{"user": {s.user}, "token": {s.token(0)}, "mount": {mount}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	Expect(chromedp.Do(tab, chromedp.Navigate(hostURL+"/?"+q.Encode()))).To(Succeed())
	current = tab
	return tab
}

// current is the spec's tab, which AfterEach photographs when the spec failed.
var current context.Context

var _ = AfterEach(func() {
	if current != nil && CurrentSpecReport().Failed() {
		screenshot(current, "FAILED-"+strings.ReplaceAll(CurrentSpecReport().LeafNodeText, " ", "-")[:40])
	}
	current = nil
})

// rowOf is the JavaScript of the inbox row of a handset's conversation.
func rowOf(from string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.sb-row')].find((r) => r.textContent.includes(%q))`, formatPhone(from))
}

// formatPhone is how the components show a North American number.
func formatPhone(e164 string) string {
	return fmt.Sprintf("+1 (%s) %s-%s", e164[2:5], e164[5:8], e164[8:])
}

const badgeText = `(document.querySelector('[data-testid=unread-badge]')?.textContent || '')`

var _ = Describe("Embedded components in Chromium", func() {
	It("mounts the inbox from another origin, shows a message live, raises the badge, clears it on reading, and replies", func() {
		s := newScene()
		tab := s.open("inbox,unread")
		inbox := frame(tab, "inbox")
		waitFor(inbox, `document.body.textContent.includes('No conversations yet')`)
		screenshot(tab, "inbox-empty")

		By("showing an inbound message live, and raising the unread badge")
		ann := handset()
		s.texts(ann, "Hi! Can I move my cleaning to Friday?")
		waitFor(inbox, rowOf(ann)+`?.textContent.includes('Can I move my cleaning to Friday?')`)
		waitFor(inbox, rowOf(ann)+`?.querySelector('[data-testid=row-unread]')?.textContent === '1'`)
		badge := frame(tab, "unread")
		waitFor(badge, badgeText+` === '1'`)
		Expect(evaluate[float64](tab, `document.querySelector('#badge iframe').getBoundingClientRect().width`)).To(BeNumerically(">", 10),
			"the loader sized the badge's iframe to the badge")
		bob := handset()
		s.texts(bob, "Running 10 minutes late, sorry!")
		waitFor(badge, badgeText+` === '2'`)
		screenshot(tab, "inbox-live")
		screenshot(tab, "unread-badge", "#messages")

		By("clearing the conversation's unread count and the badge when the user opens it")
		Expect(chromedp.Do(inbox, chromedp.Evaluate[chromedp.Void](rowOf(ann)+`.click()`))).To(Succeed())
		waitFor(inbox, `document.querySelector('.sb-conv .sb-bubble-text')?.textContent === 'Hi! Can I move my cleaning to Friday?'`)
		waitFor(badge, badgeText+` === '1'`)
		waitFor(inbox, `!`+rowOf(ann)+`.querySelector('[data-testid=row-unread]')`)
		Expect(evaluate[[]map[string]any](tab, `window.events.filter((e) => e.type === 'conversation.opened')`)).
			To(ContainElement(HaveKey("conversation_id")), "the host heard which conversation opened")

		By("sending a reply that reaches the handset and shows delivered")
		Expect(chromedp.Do(inbox, chromedp.SendKeys(chromedp.CSS(".sb-composer textarea"), "Friday at 10 works. See you then!"),
			chromedp.Click(chromedp.CSS(".sb-send")))).To(Succeed())
		waitFor(inbox, `[...document.querySelectorAll('.sb-msg-out')].some((m) => m.textContent.includes('Friday at 10 works') && m.dataset.status === 'delivered' && m.textContent.includes('Delivered'))`)
		Eventually(func() []sim.OutboxEntry {
			out, err := sim.Outbox(context.Background(), st.Sim(), ann)
			Expect(err).NotTo(HaveOccurred())
			return out
		}).Should(ContainElement(HaveField("Body", "Friday at 10 works. See you then!")))
		screenshot(tab, "conversation-in-inbox")
	})

	It("shows the conversation component on its own, with calls, voicemails and an opted-out contact", func() {
		s := newScene()
		cat := handset()
		s.texts(cat, "Is the office open on Saturday?")
		c, err := core.Carriers.Get(sim.Name)
		Expect(err).NotTo(HaveOccurred())
		_, err = c.(*sim.Carrier).PlaceCall(context.Background(), sim.Call{From: cat, To: s.number, VoicemailSeconds: 4})
		Expect(err).NotTo(HaveOccurred())
		s.texts(cat, "STOP")
		var conv string
		Expect(st.DB().Raw(`SELECT id FROM conversations WHERE account_id = ?`, s.account).Scan(&conv).Error).To(Succeed())
		tab := s.open("conversation", "conversation", conv)
		view := frame(tab, "conversation")
		waitFor(view, `document.querySelector('.sb-voicemail audio')?.src.includes('/files/recordings/')`)
		waitFor(view, `document.querySelector('[data-testid=composer-disabled]')?.textContent.includes('opted out')`)
		screenshot(tab, "conversation-opted-out", "#conversation")
	})

	It("shows a clear message when the token has expired, and recovers with the host's refresh callback", func() {
		s := newScene()
		s.texts(handset(), "Hello there")
		tab, cancel := chromedp.NewContext(browser)
		DeferCleanup(cancel)
		current = tab
		expired := s.token(-time.Hour)
		q := url.Values{"user": {s.user}, "token": {expired}, "mount": {"inbox"}, "gate": {"1"}}
		Expect(chromedp.Do(tab, chromedp.Navigate(hostURL+"/?"+q.Encode()))).To(Succeed())
		inbox := frame(tab, "inbox")
		waitFor(inbox, `document.querySelector('[data-testid=session-expired]')?.textContent.includes('Your session has expired')`)
		waitFor(tab, `window.tokenCalls >= 1`, "the component asked the host for a new token")
		screenshot(tab, "inbox-session-expired", "#inbox")

		Expect(chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](`window.release()`))).To(Succeed())
		waitFor(inbox, `document.querySelector('.sb-row')?.textContent.includes('Hello there')`)
		waitFor(inbox, `!document.querySelector('[data-testid=session-expired]')`)
	})

	It("renders a message body as text, never as HTML", func() {
		s := newScene()
		dan := handset()
		const body = `<img src=x onerror=alert(1)>`
		s.texts(dan, body)
		tab := s.open("inbox")
		var dialogs atomic.Int64
		go func() {
			for _, err := range chromedp.Events(tab, page.JavascriptDialogOpening) {
				if err != nil {
					return
				}
				dialogs.Add(1)
			}
		}()
		inbox := frame(tab, "inbox")
		waitFor(inbox, rowOf(dan)+`?.textContent.includes('<img src=x onerror=alert(1)>')`)
		Expect(chromedp.Do(inbox, chromedp.Evaluate[chromedp.Void](rowOf(dan)+`.click()`))).To(Succeed())
		waitFor(inbox, `document.querySelector('.sb-conv .sb-bubble-text')?.textContent === '<img src=x onerror=alert(1)>'`)
		Expect(evaluate[int](inbox, `document.querySelectorAll('.sb-conv .sb-bubble img, .sb-list img').length`)).To(BeZero())
		Consistently(dialogs.Load, 500*time.Millisecond).Should(BeZero(), "no script ran")
		screenshot(tab, "conversation-html-as-text", "#inbox")
	})
})
