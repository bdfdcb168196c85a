package server_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
)

// embedUser is a user of an account with a fresh token, calling the component API.
type embedUser struct {
	t       *tenant
	ID      string
	Token   string
	headers []string
}

// newEmbedUser creates a user in the account and gets it a token through the public API.
func (t *tenant) newEmbedUser(acct, name string) *embedUser {
	id := t.createUserIn(acct, map[string]any{"first_name": name})["id"].(string)
	return &embedUser{t: t, ID: id, Token: t.issueToken(id, nil)}
}

func (u *embedUser) request(method, path string, body any) *response {
	headers := append([]string{"Authorization", "Bearer " + u.Token}, u.headers...)
	return u.t.withKey("").request(method, path, body, headers...)
}

func (u *embedUser) get(path string) *response { return u.request(http.MethodGet, path, nil) }

func (u *embedUser) post(path string, body any) *response {
	return u.request(http.MethodPost, path, body)
}

// embedPage is one page of a component API list.
type embedPage struct {
	Data       []map[string]any
	Pagination struct {
		NextCursor *string `json:"next_cursor"`
	}
}

// page reads one page of a component API list.
func (u *embedUser) page(path string) embedPage {
	r := u.get(path)
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK), r.String())
	var p embedPage
	r.Into(&p)
	return p
}

// conversations lists the user's inbox.
func (u *embedUser) conversations(query string) []map[string]any {
	return u.page("/embed/api/conversations" + query).Data
}

// unread reads the user's unread totals: conversations and messages.
func (u *embedUser) unread() []float64 {
	r := u.get("/embed/api/unread")
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK), r.String())
	m := r.JSON()
	return []float64{m["unread_conversations"].(float64), m["unread_messages"].(float64)}
}

// conversationWith returns the id of the account's conversation with a handset.
func conversationWith(u *embedUser, handset string) string {
	for _, c := range u.conversations("?limit=100") {
		if c["contact"].(map[string]any)["phone_number"] == handset {
			return c["id"].(string)
		}
	}
	Fail("no conversation with " + handset)
	return ""
}

var _ = Describe("Embedded components' API", func() {
	var (
		t            *tenant
		acct, number string
		u            *embedUser
	)
	BeforeEach(func() {
		t, acct, _, number = newSendingAccount()
		u = t.newEmbedUser(acct, "Brian")
	})

	Describe("authentication", func() {
		It("answers the session of a valid token: the user and its account", func() {
			r := u.get("/embed/api/session")
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()["user"]).To(HaveKeyWithValue("id", u.ID))
			Expect(r.JSON()["account"]).To(SatisfyAll(HaveKeyWithValue("id", acct), HaveKeyWithValue("name", "Acme Dental")))
			Expect(r.Header.Get("Deprecation")).To(BeEmpty())
		})

		It("refuses a request without a token", func() {
			Expect(t.withKey("").get("/embed/api/conversations")).To(HaveError(http.StatusUnauthorized, "missing_token"))
		})

		It("refuses an API key in place of a user token", func() {
			Expect(t.get("/embed/api/conversations")).To(HaveError(http.StatusUnauthorized, "invalid_token"))
		})

		It("refuses a token whose claims were changed", func() {
			parts := strings.Split(u.Token, ".")
			claims, err := base64.RawURLEncoding.DecodeString(parts[1])
			Expect(err).NotTo(HaveOccurred())
			var m map[string]any
			Expect(json.Unmarshal(claims, &m)).To(Succeed())
			m["acct"] = "acct_01jgzzzzzzzzzzzzzzzzzzzzzz"
			b, _ := json.Marshal(m)
			u.Token = parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
			Expect(u.get("/embed/api/session")).To(HaveError(http.StatusUnauthorized, "invalid_token"))
		})

		It("refuses a token signed with a key this installation does not publish", func() {
			_, key, err := ed25519.GenerateKey(rand.Reader)
			Expect(err).NotTo(HaveOccurred())
			tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.MapClaims{"iss": "https://switchboard.test", "sub": u.ID,
				"acct": acct, "iat": clock.Now().Unix(), "exp": clock.Now().Add(time.Hour).Unix()})
			tok.Header["kid"] = "sig_forged"
			u.Token, err = tok.SignedString(key)
			Expect(err).NotTo(HaveOccurred())
			Expect(u.get("/embed/api/session")).To(HaveError(http.StatusUnauthorized, "invalid_token"))
		})

		It("refuses an expired token as token_expired, so that the component asks for a new one", func() {
			clock.Advance(16 * time.Minute)
			Expect(u.get("/embed/api/conversations")).To(HaveError(http.StatusUnauthorized, "token_expired"))
		})

		It("refuses the token of a deleted user", func() {
			Expect(t.delete("/users/" + u.ID)).To(HaveStatus(http.StatusOK))
			Expect(u.get("/embed/api/session")).To(HaveError(http.StatusUnauthorized, "invalid_token"))
		})

		It("refuses the users of a locked project", func() {
			_, err := st.SetProjectLocked(context.Background(), t.ProjectID, true)
			Expect(err).NotTo(HaveOccurred())
			Expect(u.get("/embed/api/session")).To(HaveError(http.StatusForbidden, "platform_locked"))
		})

		It("does not take the token from the query string", func() {
			r := t.withKey("").get("/embed/api/session?token=" + u.Token)
			Expect(r).To(HaveError(http.StatusUnauthorized, "missing_token"))
		})
	})

	Describe("scoping", func() {
		It("shows only the user's account's conversations; another account's is not found", func() {
			mine := newHandset()
			handsetSends(mine, number, "Hello")
			// Another account of the same project, and another project.
			other := t.createAccount("Other brand")
			_, otherNumber := t.addNumber(other, sendable)
			handsetSends(newHandset(), otherNumber, "Not for Brian")
			t2, acct2, _, number2 := newSendingAccount()
			handsetSends(newHandset(), number2, "Not for Brian either")

			Expect(u.conversations("")).To(ConsistOf(HaveKeyWithValue("contact", HaveKeyWithValue("phone_number", mine))))
			otherUser := t.newEmbedUser(other, "Olga")
			foreign := otherUser.conversations("")[0]["id"].(string)
			for _, r := range []*response{
				u.get("/embed/api/conversations/" + foreign),
				u.get("/embed/api/conversations/" + foreign + "/items"),
				u.post("/embed/api/conversations/"+foreign+"/messages", map[string]any{"body": "hi"}),
				u.post("/embed/api/conversations/"+foreign+"/read", map[string]any{}),
			} {
				Expect(r).To(HaveError(http.StatusNotFound, "not_found"))
			}
			Expect(outbox(otherUser.conversations("")[0]["contact"].(map[string]any)["phone_number"].(string))).To(BeEmpty())
			Expect(t2.newEmbedUser(acct2, "Pia").conversations("")).To(HaveLen(1), "the other project's user sees its own")
		})
	})

	Describe("the inbox", func() {
		It("lists conversations by latest activity, with the last message, unread counts and search", func() {
			ann, bob, cat := newHandset(), newHandset(), newHandset()
			handsetSends(ann, number, "Ann's first")
			handsetSends(bob, number, "Bob here")
			handsetSends(cat, number, "Cat here")
			handsetSends(ann, number, "Ann again")
			Expect(t.patch("/contacts/"+conversationContact(u, bob), map[string]any{"first_name": "Bob", "last_name": "Ross"})).To(HaveStatus(http.StatusOK))

			list := u.conversations("")
			Expect(list).To(HaveLen(3))
			Expect(list[0]["contact"]).To(HaveKeyWithValue("phone_number", ann))
			Expect(list[0]["last_message"]).To(SatisfyAll(HaveKeyWithValue("body", "Ann again"), HaveKeyWithValue("direction", "inbound")))
			Expect(list[0]["unread_count"]).To(BeNumerically("==", 2))
			Expect(list[1]["contact"]).To(HaveKeyWithValue("phone_number", cat))
			Expect(list[2]["contact"]).To(SatisfyAll(HaveKeyWithValue("name", "Bob Ross"), HaveKeyWithValue("phone_number", bob)))

			By("paging with after")
			page := u.page("/embed/api/conversations?limit=2")
			Expect(page.Data).To(HaveLen(2))
			Expect(page.Pagination.NextCursor).NotTo(BeNil())
			rest := u.conversations("?limit=2&after=" + *page.Pagination.NextCursor)
			Expect(rest).To(ConsistOf(HaveKeyWithValue("contact", HaveKeyWithValue("phone_number", bob))))

			By("searching by name and by number")
			Expect(u.conversations("?q=ross")).To(ConsistOf(HaveKeyWithValue("contact", HaveKeyWithValue("phone_number", bob))))
			Expect(u.conversations("?q=" + cat[len(cat)-6:])).To(ConsistOf(HaveKeyWithValue("contact", HaveKeyWithValue("phone_number", cat))))
			Expect(u.conversations("?q=%25")).To(BeEmpty(), "LIKE wildcards are searched as text")

			By("moving a conversation up when it has news")
			handsetSends(bob, number, "Bob again")
			Expect(u.conversations("")[0]["contact"]).To(HaveKeyWithValue("phone_number", bob))
		})

		It("shows a thread newest first with its calls and voicemails, and pages through it", func() {
			handset := newHandset()
			handsetSends(handset, number, "one")
			handsetCalls(sim.Call{From: handset, To: number, VoicemailSeconds: 3})
			for _, b := range []string{"two", "three"} {
				handsetSends(handset, number, b)
			}
			conv := conversationWith(u, handset)
			page := u.page("/embed/api/conversations/" + conv + "/items?limit=2")
			Expect(page.Data).To(HaveLen(2))
			Expect(page.Data[0]).To(SatisfyAll(HaveKeyWithValue("kind", "message"), HaveKeyWithValue("body", "three")))
			Expect(page.Data[1]).To(HaveKeyWithValue("body", "two"))
			page = u.page("/embed/api/conversations/" + conv + "/items?limit=2&after=" + *page.Pagination.NextCursor)
			Expect(page.Data).To(HaveLen(2))
			Expect(page.Data[0]).To(SatisfyAll(HaveKeyWithValue("kind", "call"), HaveKeyWithValue("status", "missed"),
				HaveKeyWithValue("voicemail", HaveKeyWithValue("url", ContainSubstring("/files/recordings/")))))
			Expect(page.Data[1]).To(HaveKeyWithValue("body", "one"))
			Expect(page.Pagination.NextCursor).To(BeNil())
		})
	})

	Describe("read state", func() {
		It("counts unread messages per user until the user reads the conversation", func() {
			handset := newHandset()
			handsetSends(handset, number, "Hi")
			handsetSends(handset, number, "Are you there?")
			handsetSends(newHandset(), number, "Someone else")
			Expect(u.unread()).To(Equal([]float64{2, 3}))
			conv := conversationWith(u, handset)

			r := u.post("/embed/api/conversations/"+conv+"/read", map[string]any{})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()["unread_count"]).To(BeNumerically("==", 0))
			Expect(u.unread()).To(Equal([]float64{1, 1}))

			By("keeping another user's read state apart")
			other := t.newEmbedUser(acct, "Olga")
			Expect(other.unread()).To(Equal([]float64{2, 3}))

			By("counting what arrives afterwards")
			handsetSends(handset, number, "Hello?")
			Expect(u.unread()).To(Equal([]float64{2, 2}))
			Expect(u.get("/embed/api/conversations/" + conv).JSON()["unread_count"]).To(BeNumerically("==", 1))
		})

		It("marks read up to a given message, never backwards, and refuses a message of another conversation", func() {
			handset := newHandset()
			handsetSends(handset, number, "first")
			handsetSends(handset, number, "second")
			conv := conversationWith(u, handset)
			items := u.get("/embed/api/conversations/" + conv + "/items").JSON()["data"].([]any)
			newest, older := items[0].(map[string]any)["id"], items[1].(map[string]any)["id"]

			Expect(u.post("/embed/api/conversations/"+conv+"/read", map[string]any{"message_id": older}).JSON()["unread_count"]).
				To(BeNumerically("==", 1))
			Expect(u.post("/embed/api/conversations/"+conv+"/read", map[string]any{"message_id": newest}).JSON()["unread_count"]).
				To(BeNumerically("==", 0))
			Expect(u.post("/embed/api/conversations/"+conv+"/read", map[string]any{"message_id": older}).JSON()["unread_count"]).
				To(BeNumerically("==", 0), "the mark does not move back")

			handsetSends(newHandset(), number, "elsewhere")
			elsewhere := u.conversations("")[0]["last_message"].(map[string]any)["id"]
			Expect(u.post("/embed/api/conversations/"+conv+"/read", map[string]any{"message_id": elsewhere})).To(HaveFieldError("message_id"))
			Expect(u.post("/embed/api/conversations/"+conv+"/read", `{"message_id":`)).To(HaveError(http.StatusBadRequest, "invalid_json"))
			Expect(u.post("/embed/api/conversations/"+conv+"/read", map[string]any{"up_to": "x"})).To(HaveFieldError("body"))
		})
	})

	Describe("replies", func() {
		It("sends as the user from the conversation's number, and the handset gets it", func() {
			handset := newHandset()
			handsetSends(handset, number, "Can I come at 3?")
			conv := conversationWith(u, handset)
			r := u.post("/embed/api/conversations/"+conv+"/messages", map[string]any{"body": "See you at 3!"})
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			m := r.JSON()
			Expect(m).To(SatisfyAll(HaveKeyWithValue("kind", "message"), HaveKeyWithValue("direction", "outbound"),
				HaveKeyWithValue("status", "queued"), HaveKeyWithValue("sent_by_user_id", u.ID), HaveKeyWithValue("conversation_id", conv)))
			msg := t.awaitStatus(m["id"].(string), "delivered")
			Expect(msg["metadata"]).To(HaveKeyWithValue("user_id", u.ID))
			Expect(outbox(handset)).To(ContainElement(SatisfyAll(
				HaveField("Body", "See you at 3!"), HaveField("From", number))))
		})

		It("refuses an empty reply, a bad attachment URL and a reply to an opted-out contact", func() {
			handset := newHandset()
			handsetSends(handset, number, "STOP")
			conv := conversationWith(u, handset)
			Expect(u.post("/embed/api/conversations/"+conv+"/messages", map[string]any{"body": "  "})).To(HaveFieldError("body"))
			Expect(u.post("/embed/api/conversations/"+conv+"/messages", map[string]any{"body": "x", "attachment_url": "ftp://x"})).
				To(HaveFieldError("attachment_url"))
			Expect(u.get("/embed/api/conversations/" + conv).JSON()).To(SatisfyAll(
				HaveKeyWithValue("can_reply", false), HaveKeyWithValue("reply_disabled_reason", "opted_out")))
			Expect(u.post("/embed/api/conversations/"+conv+"/messages", map[string]any{"body": "Please come back"})).
				To(HaveError(http.StatusUnprocessableEntity, "opted_out"))
		})
	})

	Describe("publishable tokens (deprecated)", func() {
		It("open the components as a user of the token's account, with a Deprecation header, until revoked", func() {
			tok, secret, err := st.CreatePublishableToken(context.Background(), acct)
			Expect(err).NotTo(HaveOccurred())
			Expect(secret).To(HavePrefix("atok_live_"))
			Expect(tok.Hash).NotTo(ContainSubstring(secret[10:]), "only a hash is stored")
			handsetSends(newHandset(), number, "Hi")
			pub := &embedUser{t: t, Token: secret, headers: []string{"Switchboard-User", u.ID}}
			r := pub.get("/embed/api/conversations")
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.Header.Get("Deprecation")).To(HavePrefix("@"))
			Expect(pub.get("/embed/api/session").JSON()).To(HaveKeyWithValue("deprecated_auth", true))

			By("opening the page with ?user_id=&token=, framed by the project's origins")
			Expect(st.AddEmbedOrigin(context.Background(), t.ProjectID, "https://app.acme.test")).To(Succeed())
			page := t.withKey("").get("/embed/inbox?user_id=" + u.ID + "&token=" + secret)
			Expect(page).To(HaveStatus(http.StatusOK))
			Expect(page.Header.Get("Deprecation")).NotTo(BeEmpty())
			Expect(page.Header.Get("Content-Security-Policy")).To(ContainSubstring("frame-ancestors 'self' https://app.acme.test"))

			By("refusing a user of another account")
			other := t.newEmbedUser(t.createAccount("Other"), "Olga")
			pub.headers = []string{"Switchboard-User", other.ID}
			Expect(pub.get("/embed/api/conversations")).To(HaveError(http.StatusUnauthorized, "invalid_token"))
			pub.headers = nil
			Expect(pub.get("/embed/api/conversations")).To(HaveError(http.StatusUnauthorized, "invalid_token"))

			By("refusing it once revoked")
			_, err = st.RevokePublishableToken(context.Background(), tok.ID)
			Expect(err).NotTo(HaveOccurred())
			pub.headers = []string{"Switchboard-User", u.ID}
			Expect(pub.get("/embed/api/conversations")).To(HaveError(http.StatusUnauthorized, "invalid_token"))
		})
	})

	Describe("pages", func() {
		It("serve each component framed only by the origins its project allows", func() {
			Expect(st.AddEmbedOrigin(context.Background(), t.ProjectID, "https://crm.acme.test")).To(Succeed())
			for _, c := range []string{"inbox", "conversation", "unread"} {
				r := t.withKey("").get("/embed/" + c + "?account=" + acct)
				Expect(r).To(HaveStatus(http.StatusOK))
				Expect(r.Header.Get("Content-Type")).To(HavePrefix("text/html"))
				csp := r.Header.Get("Content-Security-Policy")
				Expect(csp).To(ContainSubstring("frame-ancestors 'self' https://crm.acme.test"))
				Expect(csp).To(ContainSubstring("script-src 'self'"))
				Expect(r.Header.Get("Referrer-Policy")).To(Equal("no-referrer"))
			}
			Expect(t.withKey("").get("/embed/inbox").Header.Get("Content-Security-Policy")).To(HaveSuffix("frame-ancestors 'self'"))
			Expect(t.withKey("").get("/embed/nothing")).To(HaveError(http.StatusNotFound, "not_found"))
		})

		It("serve the loader and the hashed assets the pages name", func() {
			r := t.withKey("").get("/embed/v1.js")
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.Header.Get("Content-Type")).To(ContainSubstring("javascript"))
			Expect(string(r.Body)).To(ContainSubstring("Switchboard"))
			page := string(t.withKey("").get("/embed/inbox").Body)
			i := strings.Index(page, "/ui/assets/")
			Expect(i).To(BeNumerically(">", 0))
			asset := page[i : i+strings.IndexAny(page[i:], `"'`)]
			a := t.withKey("").get(asset)
			Expect(a).To(HaveStatus(http.StatusOK))
			Expect(a.Header.Get("Cache-Control")).To(ContainSubstring("immutable"))
			Expect(a.Header.Get("Content-Encoding")).To(BeEmpty())
			z := t.withKey("").get(asset, "Accept-Encoding", "gzip, br")
			Expect(z.Header.Get("Content-Encoding")).To(Equal("gzip"))
			zr, err := gzip.NewReader(bytes.NewReader(z.Body))
			Expect(err).NotTo(HaveOccurred())
			plain, err := io.ReadAll(zr)
			Expect(err).NotTo(HaveOccurred())
			Expect(plain).To(Equal(a.Body))
			Expect(t.withKey("").get("/ui/assets/../../embed.html")).To(HaveStatus(http.StatusNotFound))
		})
	})

	Describe("rate limiting", func() {
		It("holds each user to its own bucket", func() {
			limited := newAPI(server.Config{RateLimit: -1, Embed: server.EmbedConfig{RateLimit: 1, RateBurst: 2}})
			lu := *u
			lu.t = &tenant{ProjectID: t.ProjectID, Key: t.Key, api: limited}
			Expect(lu.get("/embed/api/unread")).To(HaveStatus(http.StatusOK))
			Expect(lu.get("/embed/api/unread")).To(HaveStatus(http.StatusOK))
			r := lu.get("/embed/api/unread")
			Expect(r).To(HaveError(http.StatusTooManyRequests, "rate_limited"))
			Expect(r.Header.Get("Retry-After")).NotTo(BeEmpty())
			other := &embedUser{t: lu.t, Token: t.issueToken(t.createUserIn(acct, map[string]any{"first_name": "Olga"})["id"].(string), nil)}
			Expect(other.get("/embed/api/unread")).To(HaveStatus(http.StatusOK))
		})
	})

	Describe("the live stream", func() {
		var srv *httptest.Server
		BeforeEach(func() {
			srv = httptest.NewServer(api)
			DeferCleanup(srv.Close)
		})

		It("sends new messages, conversations and unread totals as they happen, and loses nothing across a reconnection", func() {
			s := openStream(srv.URL, u.Token, "")
			first := s.next("unread")
			Expect(first.data).To(HaveKeyWithValue("unread_conversations", BeNumerically("==", 0)))

			handset := newHandset()
			handsetSends(handset, number, "Is anyone there?")
			msg := s.next("message")
			Expect(msg.data).To(SatisfyAll(HaveKeyWithValue("body", "Is anyone there?"), HaveKeyWithValue("direction", "inbound")))
			conv := s.next("conversation")
			Expect(conv.data).To(SatisfyAll(HaveKeyWithValue("id", msg.data["conversation_id"]), HaveKeyWithValue("unread_count", BeNumerically("==", 1))))
			Expect(s.next("unread").data).To(HaveKeyWithValue("unread_conversations", BeNumerically("==", 1)))

			By("telling the read state when the user reads it (from another tab)")
			Expect(u.post("/embed/api/conversations/"+conv.data["id"].(string)+"/read", map[string]any{})).To(HaveStatus(http.StatusOK))
			Expect(s.next("conversation").data).To(HaveKeyWithValue("unread_count", BeNumerically("==", 0)))
			last := s.next("unread")
			Expect(last.data).To(HaveKeyWithValue("unread_conversations", BeNumerically("==", 0)))
			s.close()

			By("resuming from the last event id after what happened while disconnected")
			handsetSends(handset, number, "Hello??")
			resumed := openStream(srv.URL, u.Token, last.id)
			// It may send again what changed shortly before the position (each change carries the
			// current state); it must send what changed after.
			Expect(resumed.nextWhere("message", HaveKeyWithValue("body", "Hello??"))).NotTo(BeNil())
			Expect(resumed.nextWhere("unread", HaveKeyWithValue("unread_conversations", BeNumerically("==", 1)))).NotTo(BeNil())
			resumed.close()
		})

		It("sends status changes of the user's replies", func() {
			handset := newHandset()
			handsetSends(handset, number, "Hi")
			conv := conversationWith(u, handset)
			s := openStream(srv.URL, u.Token, "")
			r := u.post("/embed/api/conversations/"+conv+"/messages", map[string]any{"body": "Hello!"})
			Expect(r).To(HaveStatus(http.StatusCreated))
			id := r.JSON()["id"]
			Expect(s.nextWhere("message", SatisfyAll(HaveKeyWithValue("id", id), HaveKeyWithValue("status", "sent")))).NotTo(BeNil())
			Expect(s.nextWhere("message", SatisfyAll(HaveKeyWithValue("id", id), HaveKeyWithValue("status", "delivered")))).NotTo(BeNil())
			s.close()
		})

		It("refuses a Last-Event-ID it did not send, and resets a position too old to resume", func() {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/embed/api/stream", nil)
			req.Header.Set("Authorization", "Bearer "+u.Token)
			req.Header.Set("Last-Event-ID", "yesterday")
			res, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			res.Body.Close()
			Expect(res.StatusCode).To(Equal(http.StatusUnprocessableEntity))

			old := openStream(srv.URL, u.Token, "1000")
			Expect(old.next("reset")).NotTo(BeNil())
			old.close()
		})
	})
})

// conversationContact returns the contact id of the user's conversation with a handset.
func conversationContact(u *embedUser, handset string) string {
	for _, c := range u.conversations("?limit=100") {
		if ct := c["contact"].(map[string]any); ct["phone_number"] == handset {
			return ct["id"].(string)
		}
	}
	Fail("no conversation with " + handset)
	return ""
}

// sseEvent is one event of a live stream.
type sseEvent struct {
	name, id string
	data     map[string]any
}

// sseStream reads a live stream in the background.
type sseStream struct {
	events chan sseEvent
	close  func()
}

// openStream opens the live stream over real HTTP (lastID "" for none).
func openStream(base, token, lastID string) *sseStream {
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/embed/api/stream", nil)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, res.StatusCode).To(Equal(http.StatusOK))
	ExpectWithOffset(1, res.Header.Get("Content-Type")).To(Equal("text/event-stream"))
	s := &sseStream{events: make(chan sseEvent, 1000), close: func() { cancel(); _ = res.Body.Close() }}
	DeferCleanup(s.close)
	go func() {
		defer GinkgoRecover()
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data)
			}
		}
	}()
	return s
}

// next returns the next event of that name, skipping others.
func (s *sseStream) next(name string) sseEvent { return s.nextWhere(name, Not(BeNil())) }

// nextWhere returns the next event of that name whose data matches, skipping others.
func (s *sseStream) nextWhere(name string, match types.GomegaMatcher) sseEvent {
	var out sseEvent
	EventuallyWithOffset(1, func() bool {
		for {
			select {
			case ev, ok := <-s.events:
				if !ok {
					return false
				}
				if ok, _ := match.Match(ev.data); ok && ev.name == name {
					out = ev
					return true
				}
			default:
				return false
			}
		}
	}).WithTimeout(20*time.Second).WithPolling(20*time.Millisecond).Should(BeTrue(), "no %q event on the stream", name)
	return out
}
