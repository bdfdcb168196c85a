package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/store"
)

// messageIDPattern is a message TypeID.
const messageIDPattern = `^msg_[0-7][0-9a-hjkmnp-tv-z]{25}$`

// redispatchArgs enqueues the core's dispatch job for a message again, as a retry would.
type redispatchArgs struct {
	MessageID string `json:"message_id"`
}

func (redispatchArgs) Kind() string { return "dispatch_message" }

var _ = Describe("Messages", func() {
	var (
		t      *tenant
		acct   string
		fromID string
		from   string
	)
	BeforeEach(func() {
		t, acct, fromID, from = newSendingAccount()
	})

	Describe("POST /accounts/{account_id}/messages", func() {
		It("queues a message to+from, answers 201, and the workers take it to delivered with events", func() {
			to := newHandset()
			m := t.send(acct, map[string]any{"to": to, "from": from, "body": "Your car is ready for pickup!", "metadata": map[string]any{"order_id": "1234"}})
			Expect(m).To(SatisfyAll(
				HaveKeyWithValue("id", MatchRegexp(messageIDPattern)),
				HaveKeyWithValue("status", "queued"),
				HaveKeyWithValue("direction", "outbound"),
				HaveKeyWithValue("body", "Your car is ready for pickup!"),
				HaveKeyWithValue("attachments", BeEmpty()),
				HaveKeyWithValue("blast_id", BeNil()),
				HaveKeyWithValue("metadata", Equal(map[string]any{"order_id": "1234"})),
				HaveKeyWithValue("encoding", "gsm7"),
				HaveKeyWithValue("segments", BeNumerically("==", 1)),
				HaveKeyWithValue("type", "sms"),
				HaveKeyWithValue("created_at", Not(BeEmpty())),
				Not(HaveKey("sent_at")), Not(HaveKey("delivered_at")), Not(HaveKey("failed_at")),
			))
			conv := m["conversation"].(map[string]any)
			Expect(conv["id"]).To(MatchRegexp(`^cnv_`))
			Expect(conv["contact"]).To(HaveKeyWithValue("phone_number", to))
			Expect(conv["phone_number"]).To(Equal(map[string]any{"id": fromID, "number": from, "type": "local", "name": "Main line", "metadata": map[string]any{}}))

			id := m["id"].(string)
			done := t.awaitStatus(id, "delivered")
			Expect(done).To(SatisfyAll(HaveKey("sent_at"), HaveKey("delivered_at"), Not(HaveKey("failure_reason"))))
			Expect(outbox(to)).To(ConsistOf(SatisfyAll(
				HaveField("Reference", id), HaveField("From", from), HaveField("To", to),
				HaveField("Body", "Your car is ready for pickup!"), HaveField("Parts", 1), HaveField("Media", BeEmpty()),
			)))
			Expect(t.eventsFor("message.sent", id)).To(ConsistOf(HaveKeyWithValue("status", "sent")))
			delivered := t.eventsFor("message.delivered", id)
			Expect(delivered).To(HaveLen(1))
			Expect(delivered[0]).To(SatisfyAll(
				HaveKeyWithValue("status", "delivered"), HaveKeyWithValue("delivered_at", Not(BeEmpty())),
				HaveKeyWithValue("body", "Your car is ready for pickup!"), HaveKeyWithValue("metadata", HaveKeyWithValue("order_id", "1234")),
				HaveKeyWithValue("conversation", SatisfyAll(HaveKeyWithValue("id", conv["id"]),
					HaveKeyWithValue("contact", HaveKeyWithValue("phone_number", to)),
					HaveKeyWithValue("phone_number", HaveKeyWithValue("number", from)))),
			))
		})

		It("takes the conversation form, creates the contact from its params and threads sends into one conversation", func() {
			first := t.send(acct, map[string]any{"conversation": map[string]any{
				"contact":      map[string]any{"phone_number": "+14155550124", "first_name": "Mia", "email": "mia@example.com"},
				"phone_number": fromID,
			}, "body": "Hello Mia"})
			second := t.send(acct, map[string]any{"to": "+14155550124", "body": "Second"})
			conv := first["conversation"].(map[string]any)
			Expect(conv["contact"]).To(SatisfyAll(HaveKeyWithValue("first_name", "Mia"), HaveKeyWithValue("email", "mia@example.com")))
			Expect(second["conversation"].(map[string]any)["id"]).To(Equal(conv["id"]), "the account's first number is the default sender")
			Expect(t.eventsFor("conversation.created", conv["id"].(string))).To(HaveLen(1))
			contacts := t.get("/accounts/" + acct + "/contacts").JSON()["data"]
			Expect(contacts).To(ConsistOf(HaveKeyWithValue("phone_number", "+14155550124")))
		})

		It("makes one contact and one conversation of concurrent first sends to a new recipient", func() {
			to := newHandset()
			const n = 8
			convs := make(chan string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer GinkgoRecover()
					defer wg.Done()
					m := t.send(acct, map[string]any{"to": to, "from": from, "body": fmt.Sprintf("Hello %d", i)})
					convs <- m["conversation"].(map[string]any)["id"].(string)
				}()
			}
			wg.Wait()
			close(convs)
			var ids []string
			for id := range convs {
				ids = append(ids, id)
			}
			Expect(ids).To(HaveLen(n))
			Expect(ids).To(HaveEach(Equal(ids[0])), "every send went into one conversation")
			Expect(t.eventsFor("conversation.created", ids[0])).To(HaveLen(1))
			contacts := t.get("/accounts/" + acct + "/contacts").JSON()["data"]
			Expect(contacts).To(ConsistOf(HaveKeyWithValue("phone_number", to)))
			thread := t.get("/accounts/" + acct + "/messages?conversation_id=" + ids[0]).JSON()["data"]
			Expect(thread).To(HaveLen(n))
		})

		It("counts segments and encoding, and makes long texts MMS", func() {
			h := newHandset()
			m := t.send(acct, map[string]any{"to": h, "body": strings.Repeat("ж€", 40)})
			Expect(m).To(SatisfyAll(HaveKeyWithValue("encoding", "ucs2"), HaveKeyWithValue("segments", BeNumerically("==", 2)), HaveKeyWithValue("type", "sms")))
			m = t.send(acct, map[string]any{"to": h, "body": strings.Repeat("a", 153*10+1)})
			Expect(m).To(SatisfyAll(HaveKeyWithValue("encoding", "gsm7"), HaveKeyWithValue("segments", BeNumerically("==", 11)), HaveKeyWithValue("type", "mms")))
			t.awaitStatus(m["id"].(string), "delivered")
			Expect(outbox(h)).To(ContainElement(HaveField("Parts", 11)))
		})

		DescribeTable("refuses a malformed send with 422 validation_error",
			func(body map[string]any, field string) {
				Expect(t.post("/accounts/"+acct+"/messages", body)).To(HaveFieldError(field))
			},
			Entry("both shapes", map[string]any{"to": "+14155550123", "conversation": map[string]any{"contact": map[string]any{"phone_number": "+14155550123"}}, "body": "x"}, "to"),
			Entry("conversation with from", map[string]any{"from": "+19990000000", "conversation": map[string]any{"contact": map[string]any{"phone_number": "+14155550123"}}, "body": "x"}, "from"),
			Entry("no recipient", map[string]any{"body": "x"}, "to"),
			Entry("neither body nor attachments", map[string]any{"to": "+14155550123"}, "body"),
			Entry("an empty body", map[string]any{"to": "+14155550123", "body": ""}, "body"),
			Entry("a recipient not in E.164", map[string]any{"to": "4155550123", "body": "x"}, "to"),
			Entry("send_at more than 60 days ahead", map[string]any{"to": "+14155550123", "body": "x", "send_at": time.Now().Add(61 * 24 * time.Hour).Format(time.RFC3339)}, "send_at"),
			Entry("11 attachments", map[string]any{"to": "+14155550123", "attachments": elevenAttachments()}, "attachments"),
			Entry("an unknown field", map[string]any{"to": "+14155550123", "body": "x", "priority": "high"}, "priority"),
		)

		It("refuses a body longer than 1600 characters with 422 message_too_long", func() {
			Expect(t.post("/accounts/"+acct+"/messages", map[string]any{"to": "+14155550123", "body": strings.Repeat("a", 1601)})).
				To(HaveError(http.StatusUnprocessableEntity, "message_too_long"))
		})

		Describe("business rules", func() {
			It("refuses an opted-out contact with 422 opted_out", func() {
				c := t.createContactIn(acct, map[string]any{"phone_number": "+14155550130"})
				Expect(st.SetContactOptedOut(context.Background(), c["id"].(string), true, time.Now())).To(Succeed())
				Expect(t.post("/accounts/"+acct+"/messages", map[string]any{"to": "+14155550130", "body": "x"})).
					To(HaveError(http.StatusUnprocessableEntity, "opted_out"))
			})

			It("refuses a contact with outbound messaging disabled with 422 outbound_disabled", func() {
				c := t.createContactIn(acct, map[string]any{"phone_number": "+14155550131"})
				Expect(t.patch("/contacts/"+c["id"].(string), map[string]any{"outbound_disabled": true})).To(HaveStatus(http.StatusOK))
				Expect(t.post("/accounts/"+acct+"/messages", map[string]any{"to": "+14155550131", "body": "x"})).
					To(HaveError(http.StatusUnprocessableEntity, "outbound_disabled"))
			})

			It("refuses an archived account with 422 account_archived", func() {
				Expect(t.delete("/accounts/" + acct)).To(HaveStatus(http.StatusOK))
				Expect(t.post("/accounts/"+acct+"/messages", map[string]any{"to": "+14155550123", "body": "x"})).
					To(HaveError(http.StatusUnprocessableEntity, "account_archived"))
			})

			It("refuses an account without numbers with 422 no_phone_number", func() {
				bare := t.createAccount("No numbers")
				Expect(t.post("/accounts/"+bare+"/messages", map[string]any{"to": "+14155550123", "body": "x"})).
					To(HaveError(http.StatusUnprocessableEntity, "no_phone_number"))
			})

			DescribeTable("refuses a sender that is not the account's with 422 phone_number_not_found",
				func(sender func() string) {
					Expect(t.post("/accounts/"+acct+"/messages", map[string]any{"to": "+14155550123", "from": sender(), "body": "x"})).
						To(HaveError(http.StatusUnprocessableEntity, "phone_number_not_found"))
				},
				Entry("a number nobody holds", func() string { return newNumber() }),
				Entry("an id nobody holds", func() string { return store.NewID("pn") }),
				Entry("a sibling account's number", func() string {
					_, n := t.addNumber(t.createAccount("Sibling"), sendable)
					return n
				}),
				Entry("another project's number", func() string {
					o := newTenant()
					id, _ := o.addNumber(o.createAccount("Theirs"), sendable)
					return id
				}),
				Entry("the demo number, with a live key", func() string { return "+18335550000" }),
			)

			DescribeTable("refuses a local number without an attached active campaign with 422 campaign_required",
				func(setup numberSetup) {
					_, n := t.addNumber(acct, setup)
					Expect(t.post("/accounts/"+acct+"/messages", map[string]any{"to": "+14155550123", "from": n, "body": "x"})).
						To(HaveError(http.StatusUnprocessableEntity, "campaign_required"))
				},
				Entry("no campaign", numberSetup{Type: "local"}),
				Entry("a campaign in review", numberSetup{Type: "local", Campaign: store.CampaignInReview}),
				Entry("a rejected campaign", numberSetup{Type: "local", Campaign: store.CampaignRejected, Attached: true}),
				Entry("an active campaign, attachment pending", numberSetup{Type: "local", Campaign: store.CampaignActive}),
			)

			DescribeTable("refuses a toll-free number without an active verification with 422 toll_free_unverified",
				func(status string) {
					_, n := t.addNumber(acct, numberSetup{Type: store.NumberTollFree, TollFree: status})
					Expect(t.post("/accounts/"+acct+"/messages", map[string]any{"to": "+14155550123", "from": n, "body": "x"})).
						To(HaveError(http.StatusUnprocessableEntity, "toll_free_unverified"))
				},
				Entry("none", ""),
				Entry("in review", store.CampaignInReview),
				Entry("rejected", store.CampaignRejected),
			)

			It("sends from a verified toll-free number and from a short code", func() {
				_, tf := t.addNumber(acct, numberSetup{Type: store.NumberTollFree, TollFree: store.CampaignActive})
				_, sc := t.addNumber(acct, numberSetup{Type: store.NumberShortCode})
				h := newHandset()
				a := t.send(acct, map[string]any{"to": h, "from": tf, "body": "toll-free"})
				b := t.send(acct, map[string]any{"to": h, "from": sc, "body": "short code"})
				t.awaitStatus(a["id"].(string), "delivered")
				t.awaitStatus(b["id"].(string), "delivered")
				Expect(outbox(h)).To(ConsistOf(HaveField("From", tf), HaveField("From", sc)))
			})
		})

		Describe("with a demo key", func() {
			var demo *tenant
			BeforeEach(func() {
				_, secret, err := st.CreateAPIKey(context.Background(), t.ProjectID, true)
				Expect(err).NotTo(HaveOccurred())
				demo = t.withKey(secret)
			})

			It("sends through the demo number only, at most 25 per account (403 demo_message_limit)", func() {
				h := newHandset()
				m := demo.send(acct, map[string]any{"to": h, "body": "Hello from the demo"})
				Expect(m["conversation"].(map[string]any)["phone_number"]).To(HaveKeyWithValue("type", "demo"))
				t.awaitStatus(m["id"].(string), "delivered")
				Expect(outbox(h)).To(ConsistOf(HaveField("From", "+18335550000")))
				for i := 2; i <= 25; i++ {
					demo.send(acct, map[string]any{"to": h, "from": "+18335550000", "body": fmt.Sprint("demo ", i)})
				}
				Expect(demo.post("/accounts/"+acct+"/messages", map[string]any{"to": h, "body": "26"})).
					To(HaveError(http.StatusForbidden, "demo_message_limit"))
				By("counting per account")
				demo.send(t.createAccount("Another"), map[string]any{"to": h, "body": "first of another account"})
			})

			It("refuses another sender with 403 demo_api_key", func() {
				Expect(demo.post("/accounts/"+acct+"/messages", map[string]any{"to": "+14155550151", "from": from, "body": "x"})).
					To(HaveError(http.StatusForbidden, "demo_api_key"))
			})
		})
	})

	Describe("delivery outcomes", func() {
		DescribeTable("fails a message to a magic number with its failure reason and message.failed",
			func(to, reason string) {
				m := t.send(acct, map[string]any{"to": to, "body": "x"})
				id := m["id"].(string)
				failed := t.awaitStatus(id, "failed")
				Expect(failed).To(SatisfyAll(HaveKeyWithValue("failure_reason", reason), HaveKey("failed_at"), Not(HaveKey("delivered_at"))))
				Expect(t.eventsFor("message.failed", id)).To(ConsistOf(SatisfyAll(
					HaveKeyWithValue("status", "failed"), HaveKeyWithValue("failure_reason", reason), HaveKeyWithValue("failed_at", Not(BeEmpty())))))
			},
			Entry("invalid_mobile_number", "+15005550001", carriers.FailureInvalidMobileNumber),
			Entry("unreachable_carrier", "+15005550002", carriers.FailureUnreachableCarrier),
			Entry("landline", "+15005550003", carriers.FailureLandline),
			Entry("carrier_filtered", "+15005550004", carriers.FailureCarrierFiltered),
			Entry("opted_out_at_carrier", "+15005550005", carriers.FailureOptedOutAtCarrier),
			Entry("unknown_error", "+15005550006", carriers.FailureUnknown),
			Entry("refused at submission", sim.RefuseNumber, carriers.FailureInvalidMobileNumber),
		)

		It("retries a temporary carrier refusal and sends the message once", func() {
			m := t.send(acct, map[string]any{"to": sim.FlakyNumber, "body": "try again"})
			t.awaitStatus(m["id"].(string), "delivered")
			Expect(outbox(sim.FlakyNumber)).To(ConsistOf(HaveField("Reference", m["id"])))
		})

		It("blocks a number that failed as invalid: the next send fails fast without reaching the carrier", func() {
			to := "+15005550001"
			first := t.send(acct, map[string]any{"to": to, "body": "first"})
			t.awaitStatus(first["id"].(string), "failed")
			n := len(outbox(to))
			second := t.send(acct, map[string]any{"to": to, "body": "second"})
			Expect(t.awaitStatus(second["id"].(string), "failed")).To(HaveKeyWithValue("failure_reason", "invalid_mobile_number"))
			Expect(outbox(to)).To(HaveLen(n), "the blocked number was not submitted again")
			By("for this account only")
			other := t.createAccount("Other")
			_, otherFrom := t.addNumber(other, sendable)
			third := t.send(other, map[string]any{"to": to, "from": otherFrom, "body": "third"})
			t.awaitStatus(third["id"].(string), "failed")
			Expect(outbox(to)).To(HaveLen(n + 1))
		})

		It("never submits a message twice, even when its dispatch runs again", func() {
			to := newHandset()
			m := t.send(acct, map[string]any{"to": to, "body": "once"})
			id := m["id"].(string)
			t.awaitStatus(id, "delivered")
			ctx := context.Background()
			By("running the dispatch of a delivered message again")
			Expect(st.InsertJob(ctx, redispatchArgs{MessageID: id}, nil)).To(Succeed())
			By("running the dispatch of a message left `sending`, as after a crash between submission and its record")
			Expect(st.DB().Exec(`UPDATE messages SET status = 'sending', updated_at = ? WHERE id = ?`, time.Now().Add(-time.Minute).UTC(), id).Error).To(Succeed())
			Expect(st.InsertJob(ctx, redispatchArgs{MessageID: id}, nil)).To(Succeed())
			Eventually(t.messageStatus(id)).WithTimeout(10 * time.Second).Should(Equal("sent"))
			Consistently(func() int { return len(outbox(to)) }, time.Second).Should(Equal(1))
			By("the simulated carrier answering a repeated reference as a duplicate")
			c, err := core.Carriers.Messenger("sim")
			Expect(err).NotTo(HaveOccurred())
			sub, err := c.Submit(ctx, carriers.Outbound{Reference: id, From: from, To: to, Body: "once"})
			Expect(err).NotTo(HaveOccurred())
			Expect(sub.Duplicate).To(BeTrue())
			Expect(sub.CarrierID).To(Equal(outbox(to)[0].CarrierID))
			Expect(outbox(to)).To(HaveLen(1))
		})
	})

	Describe("pacing", func() {
		It("sends at most the number's rate and keeps the rest waiting, not dropped", func() {
			to := newHandset()
			var ids []string
			for i := range 15 {
				ids = append(ids, t.send(acct, map[string]any{"to": to, "body": fmt.Sprint("paced ", i)})["id"].(string))
			}
			for _, id := range ids {
				t.awaitStatus(id, "delivered")
			}
			sent := outbox(to)
			Expect(sent).To(HaveLen(15))
			// Local numbers send 10 per second: 15 messages span at least 1.4 s.
			Expect(sent[14].CreatedAt.Sub(sent[0].CreatedAt)).To(BeNumerically(">=", 1300*time.Millisecond))
		})

		It("fails with expired a message still queued after 4 hours", func() {
			_, tf := t.addNumber(acct, numberSetup{Type: store.NumberTollFree, TollFree: store.CampaignActive})
			to := newHandset()
			var ids []string
			for i := range 30 {
				ids = append(ids, t.send(acct, map[string]any{"to": to, "from": tf, "body": fmt.Sprint("slow ", i)})["id"].(string))
			}
			// Toll-free numbers send 3 per second: the last of 30 waits about 10 s, by then 5 hours.
			clock.Advance(5 * time.Hour)
			for _, id := range ids {
				Eventually(t.messageStatus(id)).WithTimeout(30 * time.Second).Should(BeElementOf("delivered", "failed"))
			}
			expired := 0
			for _, id := range ids {
				if m := t.get("/messages/" + id).JSON(); m["status"] == "failed" {
					Expect(m).To(HaveKeyWithValue("failure_reason", "expired"))
					expired++
				}
			}
			Expect(expired).To(BeNumerically(">=", 20), "most of 30 were waiting for their slot; %d expired", expired)
			Expect(outbox(to)).To(HaveLen(30-expired), "no expired message reached the carrier")
			Expect(t.events("message.failed")).To(HaveLen(expired))
		})
	})

	Describe("scheduling", func() {
		It("holds a message with a future send_at as scheduled, then sends it", func() {
			at := clock.Now().Add(2 * time.Second).UTC().Truncate(time.Second)
			m := t.send(acct, map[string]any{"to": "+14155550180", "body": "later", "send_at": at.Format(time.RFC3339)})
			Expect(m).To(SatisfyAll(HaveKeyWithValue("status", "scheduled"), HaveKeyWithValue("send_at", at.Format(time.RFC3339))))
			Consistently(t.messageStatus(m["id"].(string)), time.Second).Should(Equal("scheduled"))
			t.awaitStatus(m["id"].(string), "delivered")
		})

		It("cancels a scheduled message, which is then never sent; anything else is 409", func() {
			at := clock.Now().Add(2 * time.Second).UTC()
			h := newHandset()
			m := t.send(acct, map[string]any{"to": h, "body": "never", "send_at": at.Format(time.RFC3339Nano)})
			id := m["id"].(string)
			r := t.post("/messages/"+id+"/cancel", nil)
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(HaveKeyWithValue("status", "canceled"))
			Expect(t.post("/messages/"+id+"/cancel", nil)).To(HaveConflict())
			Consistently(t.messageStatus(id), 3*time.Second).Should(Equal("canceled"))
			Expect(outbox(h)).To(BeEmpty())

			now := t.send(acct, map[string]any{"to": h, "body": "now"})
			t.awaitStatus(now["id"].(string), "delivered")
			Expect(t.post("/messages/"+now["id"].(string)+"/cancel", nil)).To(HaveConflict())
		})

		It("sends a send_at in the past at once", func() {
			m := t.send(acct, map[string]any{"to": "+14155550182", "body": "past", "send_at": clock.Now().Add(-time.Hour).Format(time.RFC3339)})
			Expect(m).To(HaveKeyWithValue("status", "queued"))
		})
	})

	Describe("attachments", func() {
		var files *httptest.Server
		png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)
		BeforeEach(func() {
			files = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/car.png":
					w.Header().Set("Content-Type", "image/png")
					_, _ = w.Write(png)
				case "/card.vcf":
					w.Header().Set("Content-Type", "text/vcard")
					_, _ = w.Write([]byte("BEGIN:VCARD\nEND:VCARD\n"))
				case "/huge.bin":
					_, _ = w.Write(make([]byte, 5<<20+1))
				default:
					http.NotFound(w, r)
				}
			}))
			DeferCleanup(files.Close)
		})

		It("fetches attachments when sending, types them, hands them to the carrier and serves them through signed URLs", func() {
			to := newHandset()
			m := t.send(acct, map[string]any{"to": to, "body": "Your car", "attachments": []map[string]any{{"url": files.URL + "/car.png"}, {"url": files.URL + "/card.vcf"}}})
			Expect(m).To(HaveKeyWithValue("type", "mms"))
			Expect(m["attachments"]).To(HaveExactElements(
				SatisfyAll(HaveKeyWithValue("id", MatchRegexp(`^att_`)), HaveKeyWithValue("type", "image"), HaveKeyWithValue("url", HaveSuffix("/file"))),
				HaveKeyWithValue("type", "contact"),
			))
			t.awaitStatus(m["id"].(string), "delivered")
			sent := outbox(to)
			Expect(sent).To(HaveLen(1))
			Expect(sent[0].Media).To(HaveLen(2))
			Expect(sent[0].Media[0]).To(HavePrefix("https://switchboard.test/files/"))
			Expect(t.withKey("").get(strings.TrimPrefix(sent[0].Media[0], "https://switchboard.test"))).To(HaveStatus(http.StatusOK), "the carrier fetches without a key")

			att := m["attachments"].([]any)[0].(map[string]any)
			r := t.get("/attachments/" + att["id"].(string) + "/file")
			Expect(r).To(HaveStatus(http.StatusFound))
			loc, err := url.Parse(r.Header.Get("Location"))
			Expect(err).NotTo(HaveOccurred())
			Expect(loc.Path).To(HavePrefix("/files/"))
			file := t.withKey("").get(loc.Path)
			Expect(file).To(HaveStatus(http.StatusOK))
			Expect(file.Body).To(Equal(png))
			Expect(file.Header.Get("Content-Type")).To(Equal("image/png"))

			By("refusing a forged or expired link")
			Expect(t.withKey("").get(loc.Path + "x")).To(HaveError(http.StatusNotFound, "not_found"))
			clock.Advance(10 * time.Minute)
			Expect(t.withKey("").get(loc.Path)).To(HaveError(http.StatusNotFound, "not_found"))
		})

		DescribeTable("fails a message whose attachment cannot be fetched with attachment_unreachable",
			func(path string) {
				m := t.send(acct, map[string]any{"to": "+14155550191", "attachments": []map[string]any{{"url": files.URL + path}}})
				Expect(t.awaitStatus(m["id"].(string), "failed")).To(HaveKeyWithValue("failure_reason", "attachment_unreachable"))
			},
			Entry("not found", "/missing.png"),
			Entry("larger than 5 MiB", "/huge.bin"),
		)

		It("answers 404 for an attachment of another project", func() {
			m := t.send(acct, map[string]any{"to": "+14155550192", "attachments": []map[string]any{{"url": files.URL + "/car.png"}}})
			att := m["attachments"].([]any)[0].(map[string]any)["id"].(string)
			Expect(newTenant().get("/attachments/" + att + "/file")).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("GET /messages/{id} and GET /accounts/{account_id}/messages", func() {
		It("lists an account's messages newest first, filtered by conversation", func() {
			a := t.send(acct, map[string]any{"to": "+14155550200", "body": "a"})
			b := t.send(acct, map[string]any{"to": "+14155550201", "body": "b"})
			c := t.send(acct, map[string]any{"to": "+14155550200", "body": "c"})
			list := t.get("/accounts/" + acct + "/messages").JSON()
			Expect(list["data"]).To(HaveExactElements(HaveKeyWithValue("id", c["id"]), HaveKeyWithValue("id", b["id"]), HaveKeyWithValue("id", a["id"])))
			conv := a["conversation"].(map[string]any)["id"].(string)
			list = t.get("/accounts/" + acct + "/messages?conversation_id=" + conv + "&limit=1").JSON()
			Expect(list["data"]).To(HaveExactElements(HaveKeyWithValue("id", c["id"])))
			next := list["pagination"].(map[string]any)["next_cursor"].(string)
			list = t.get("/accounts/" + acct + "/messages?conversation_id=" + conv + "&after=" + next).JSON()
			Expect(list["data"]).To(HaveExactElements(HaveKeyWithValue("id", a["id"])))
			Expect(t.get("/messages/" + b["id"].(string)).JSON()).To(HaveKeyWithValue("body", "b"))
		})

		It("answers 404 for a message, a message list or a cancel of another project", func() {
			m := t.send(acct, map[string]any{"to": "+14155550202", "body": "mine"})
			other := newTenant()
			Expect(other.get("/messages/" + m["id"].(string))).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(other.post("/messages/"+m["id"].(string)+"/cancel", nil)).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(other.get("/accounts/" + acct + "/messages")).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(other.post("/accounts/"+acct+"/messages", map[string]any{"to": "+14155550202", "body": "x"})).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.get("/messages/" + store.NewID("msg"))).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})
})

func elevenAttachments() []map[string]any {
	out := make([]map[string]any, 11)
	for i := range out {
		out[i] = map[string]any{"url": fmt.Sprintf("https://files.example.com/%d.png", i)}
	}
	return out
}

var _ river.JobArgs = redispatchArgs{}
