package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// Idempotency keys under faults (issue 16, item 16). A request that died leaves its key in one of
// two states, which these specs make directly in the store, as the dead request left them: claimed
// with nothing committed (its instance died, or its transaction was lost, before the commit), or
// claimed with its resource committed and no response recorded (it died after the commit). The
// real binary killed mid-request is in cmd/switchboard/idempotency_crash_test.go.
var _ = Describe("Idempotency-Key after a failed request", func() {
	ctx := context.Background()

	// requestHash is the hash the API keeps of a POST with this path and body.
	requestHash := func(path string, body []byte) string {
		sum := sha256.Sum256(append([]byte(http.MethodPost+" "+path+"\n"), body...))
		return hex.EncodeToString(sum[:])
	}
	// claim claims key for a request as the API does, now, with the default lease.
	claim := func(t *tenant, key, path string, body []byte) *store.IdempotencyClaim {
		c, prior, err := st.ClaimIdempotencyKey(ctx, t.ProjectID, key, requestHash(path, body), clock.Now(),
			service.IdempotencyTTL, server.DefaultIdempotencyLease)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		ExpectWithOffset(1, prior).To(BeNil())
		return c
	}
	// messagesTo counts an account's messages to a handset.
	messagesTo := func(acct, handset string) int64 {
		var n int64
		ExpectWithOffset(1, st.DB().Raw(`SELECT COUNT(*) FROM messages WHERE account_id = ? AND to_number = ?`, acct, handset).
			Scan(&n).Error).To(Succeed())
		return n
	}
	// sendBody is a send's JSON body and its parameters as the service takes them.
	sendBody := func(t *tenant, acct, handset string) ([]byte, service.SendParams) {
		text := "Your appointment is tomorrow"
		b, err := json.Marshal(map[string]any{"to": handset, "body": text})
		Expect(err).NotTo(HaveOccurred())
		return b, service.SendParams{ProjectID: t.ProjectID, AccountID: acct, To: &handset, Body: &text}
	}

	// keyedSend prepares a send from a new account to a new handset, known already (a send to it
	// is then one statement) or not (the send creates its contact in a transaction).
	keyedSend := func(knownContact bool) (t *tenant, acct, handset, path string, body []byte, params service.SendParams) {
		t, acct, _, _ = newSendingAccount()
		handset = newHandset()
		if knownContact {
			t.send(acct, map[string]any{"to": handset, "body": "hello"})
		}
		body, params = sendBody(t, acct, handset)
		return t, acct, handset, "/accounts/" + acct + "/messages", body, params
	}

	Describe("a request that died before its commit", func() {
		It("answers 409 while its lease runs, then runs afresh and creates one message", func() {
			t, acct, _, _ := newSendingAccount()
			handset := newHandset()
			path := "/accounts/" + acct + "/messages"
			body, _ := sendBody(t, acct, handset)
			claim(t, "died-before-commit", path, body)

			r := t.post(path, body, "Idempotency-Key", "died-before-commit")
			Expect(r).To(HaveError(http.StatusConflict, "idempotency_key_in_use"))
			Expect(r.Header.Get("X-Should-Retry")).To(Equal("false"))
			Expect(messagesTo(acct, handset)).To(BeZero())

			clock.Advance(server.DefaultIdempotencyLease + time.Second)
			first := t.post(path, body, "Idempotency-Key", "died-before-commit")
			Expect(first).To(HaveStatus(http.StatusCreated), first.String())
			Expect(first.Header.Get("Idempotent-Replayed")).To(BeEmpty())
			again := t.post(path, body, "Idempotency-Key", "died-before-commit")
			Expect(again).To(HaveStatus(http.StatusCreated), again.String())
			Expect(again.Header.Get("Idempotent-Replayed")).To(Equal("true"))
			Expect(again.JSON()["id"]).To(Equal(first.JSON()["id"]))
			Expect(messagesTo(acct, handset)).To(BeEquivalentTo(1))
		})

		It("still refuses another body with 422 idempotency_key_reused once the lease is over", func() {
			t, acct, _, _ := newSendingAccount()
			path := "/accounts/" + acct + "/messages"
			body, _ := sendBody(t, acct, newHandset())
			claim(t, "died-other-body", path, body)
			clock.Advance(server.DefaultIdempotencyLease + time.Second)
			other, _ := sendBody(t, acct, newHandset())
			Expect(t.post(path, other, "Idempotency-Key", "died-other-body")).
				To(HaveError(http.StatusUnprocessableEntity, "idempotency_key_reused"))
		})

		DescribeTable("writes nothing for the dead request once a retry has taken its key over",
			func(knownContact bool) {
				t, acct, handset, path, body, params := keyedSend(knownContact)
				dead := claim(t, "taken-over", path, body)
				clock.Advance(server.DefaultIdempotencyLease + time.Second)
				retry, prior, err := st.ClaimIdempotencyKey(ctx, t.ProjectID, "taken-over", requestHash(path, body), clock.Now(),
					service.IdempotencyTTL, server.DefaultIdempotencyLease)
				Expect(err).NotTo(HaveOccurred())
				Expect(prior).To(BeNil())
				Expect(retry.Token).NotTo(Equal(dead.Token))

				before := messagesTo(acct, handset)
				_, err = core.Messages.Send(store.WithIdempotencyClaim(ctx, dead), params)
				Expect(err).To(MatchError(store.ErrIdempotencyClaimLost))
				Expect(messagesTo(acct, handset)).To(Equal(before), "the dead request wrote nothing")

				m, err := core.Messages.Send(store.WithIdempotencyClaim(ctx, retry), params)
				Expect(err).NotTo(HaveOccurred())
				Expect(messagesTo(acct, handset)).To(Equal(before + 1))
				replay := t.post(path, body, "Idempotency-Key", "taken-over")
				Expect(replay).To(HaveStatus(http.StatusCreated), replay.String())
				Expect(replay.JSON()["id"]).To(Equal(m.ID))
			},
			Entry("a send that creates its contact (a transaction)", false),
			Entry("a send to a known contact (one statement)", true),
		)
	})

	Describe("a request that died after its commit, before its response was recorded", func() {
		DescribeTable("shows the message it created, once, with Idempotent-Replayed",
			func(knownContact bool) {
				t, acct, handset, path, body, params := keyedSend(knownContact)
				c := claim(t, "died-after-commit", path, body)
				before := messagesTo(acct, handset)
				m, err := core.Messages.Send(store.WithIdempotencyClaim(ctx, c), params)
				Expect(err).NotTo(HaveOccurred())

				// The lease is still running: the committed message answers at once.
				r := t.post(path, body, "Idempotency-Key", "died-after-commit")
				Expect(r).To(HaveStatus(http.StatusCreated), r.String())
				Expect(r.Header.Get("Idempotent-Replayed")).To(Equal("true"))
				Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("id", m.ID), HaveKeyWithValue("body", "Your appointment is tomorrow")))
				clock.Advance(server.DefaultIdempotencyLease + time.Second)
				Expect(t.post(path, body, "Idempotency-Key", "died-after-commit").JSON()["id"]).To(Equal(m.ID))
				Expect(messagesTo(acct, handset)).To(Equal(before + 1))
			},
			Entry("a send that created its contact (a transaction)", false),
			Entry("a send to a known contact (one statement)", true),
		)

		It("shows the account, contact and phone number such requests created", func() {
			t := newTenant()
			accountBody := []byte(`{"name":"Committed"}`)
			c := claim(t, "account", "/accounts", accountBody)
			a := &store.Account{ProjectID: t.ProjectID, Name: "Committed"}
			Expect(st.CreateAccount(store.WithIdempotencyClaim(ctx, c), a)).To(Succeed())
			r := t.post("/accounts", accountBody, "Idempotency-Key", "account")
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			Expect(r.Header.Get("Idempotent-Replayed")).To(Equal("true"))
			Expect(r.JSON()).To(HaveKeyWithValue("id", a.ID))
			Expect(t.accountCount()).To(Equal(1))

			contactBody := []byte(`{"phone_number":"+14155550142"}`)
			contactPath := "/accounts/" + a.ID + "/contacts"
			c = claim(t, "contact", contactPath, contactBody)
			k := &store.Contact{ProjectID: t.ProjectID, AccountID: a.ID, PhoneNumber: "+14155550142"}
			Expect(st.CreateContact(store.WithIdempotencyClaim(ctx, c), k)).To(Succeed())
			r = t.post(contactPath, contactBody, "Idempotency-Key", "contact")
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			Expect(r.JSON()).To(HaveKeyWithValue("id", k.ID))

			numberBody := []byte(`{"area_code":"212"}`)
			numberPath := "/accounts/" + a.ID + "/phone_numbers"
			c = claim(t, "number", numberPath, numberBody)
			n, err := core.Numbers.Purchase(store.WithIdempotencyClaim(ctx, c), t.ProjectID, a.ID, service.Purchase{AreaCode: "212"})
			Expect(err).NotTo(HaveOccurred())
			r = t.post(numberPath, numberBody, "Idempotency-Key", "number")
			Expect(r).To(HaveStatus(http.StatusCreated), r.String())
			Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("id", n.ID), HaveKeyWithValue("number", n.Number)))
			Expect(t.get("/accounts/" + a.ID + "/phone_numbers").JSON()["data"]).To(HaveLen(1), "one number bought")
		})
	})

	// The specs below hold a request mid-statement with a row lock of the test's transaction, and
	// make its client go away while PostgreSQL shows the statement waiting for that lock.
	Describe("a request whose client went away", func() {
		BeforeEach(func() {
			if st.Dialect() != store.Postgres {
				Skip("holding a request mid-write needs PostgreSQL's row locks")
			}
		})
		// lockWaits counts this database's statements that start with prefix and wait for a lock.
		lockWaits := func(prefix string) func() int64 {
			return func() int64 {
				var n int64
				Expect(st.DB().Raw(`SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()
					AND wait_event_type = 'Lock' AND query LIKE ?`, prefix+"%").Scan(&n).Error).To(Succeed())
				return n
			}
		}
		// serve sends a POST with the Idempotency-Key to a server of its own (the answer, 499, goes
		// to nobody: it does without the suite's contract check) once the test's transaction holds
		// its lock, and returns the cancellation of its client's context, the channel closed once it
		// is served and its recorded answer.
		serve := func(t *tenant, path, body, key string) (cancel context.CancelFunc, served chan struct{}, rec *httptest.ResponseRecorder) {
			reqCtx, cancel := context.WithCancel(ctx)
			DeferCleanup(cancel)
			req := httptest.NewRequest(http.MethodPost, "https://switchboard.test"+path, strings.NewReader(body)).WithContext(reqCtx)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+t.Key)
			req.Header.Set("Idempotency-Key", key)
			gone, err := server.New(server.Config{Core: core, Now: clock.Now, Logger: testLogger(), RateLimit: -1})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(gone.Close)
			rec = httptest.NewRecorder()
			served = make(chan struct{})
			go func() {
				defer GinkgoRecover()
				defer close(served)
				gone.ServeHTTP(rec, req)
			}()
			return cancel, served, rec
		}

		It("forgets the claim of a request whose client went away before anything was committed", func() {
			t := newTenant()
			acct := t.createAccount("Gone")
			path := "/accounts/" + acct + "/contacts"
			body := `{"phone_number":"+14155550144"}`
			// The contact's insert waits for the test's uncommitted insert of the same contact.
			tx := holdContact(t, acct, "+14155550144")
			DeferCleanup(func() { tx.Rollback() })
			cancel, served, rec := serve(t, path, body, "gone")
			Eventually(lockWaits(`INSERT INTO "contacts"`)).Should(BeEquivalentTo(1), "the request waits mid-write")
			cancel()
			Eventually(served).WithTimeout(10 * time.Second).Should(BeClosed())
			Expect(rec.Code).To(Equal(499))
			// pgx cancels the statement in PostgreSQL after the fact (a cancel request, then it
			// closes the connection): whether it still waits or not, its transaction cannot commit.
			Expect(tx.Rollback().Error).To(Succeed())

			r := t.post(path, []byte(body), "Idempotency-Key", "gone")
			Expect(r).To(HaveStatus(http.StatusCreated), "the retry runs at once, without a replay of the 499: %s", r.String())
			Expect(r.Header.Get("Idempotent-Replayed")).To(BeEmpty())
			Expect(t.get(path).JSON()["data"]).To(HaveLen(1), "the request that went away created nothing")
		})

		It("forgets the claim of a request whose client went away while its claim was being written", func() {
			t := newTenant()
			acct := t.createAccount("Gone while claiming")
			path := "/accounts/" + acct + "/contacts"
			body := `{"phone_number":"+14155550145"}`
			// An abandoned claim of the same request, which the request takes over: its claim waits
			// for the claim's row while the test holds it.
			claim(t, "gone-claiming", path, []byte(body))
			clock.Advance(server.DefaultIdempotencyLease + time.Second)
			tx := st.DB().Begin()
			Expect(tx.Exec(`SELECT key FROM idempotency_keys WHERE project_id = ? AND key = 'gone-claiming' FOR UPDATE`, t.ProjectID).Error).To(Succeed())
			DeferCleanup(func() { tx.Rollback() })
			cancel, served, rec := serve(t, path, body, "gone-claiming")
			Eventually(lockWaits(`INSERT INTO idempotency_keys`)).Should(BeEquivalentTo(1), "the claim waits for the row")
			cancel()
			// Were the claim given up with its client, it would still be written once the row is
			// free, and hold the key for a whole lease without anybody to release it.
			Consistently(served).WithTimeout(100*time.Millisecond).ShouldNot(BeClosed(), "the claim is written to its end")
			Expect(tx.Rollback().Error).To(Succeed())
			Eventually(served).WithTimeout(10 * time.Second).Should(BeClosed())
			Expect(rec.Code).To(Equal(499))

			r := t.post(path, []byte(body), "Idempotency-Key", "gone-claiming")
			Expect(r).To(HaveStatus(http.StatusCreated), "the retry runs at once: %s", r.String())
			Expect(r.Header.Get("Idempotent-Replayed")).To(BeEmpty())
		})
	})

	It("keeps the claim of a request that runs longer than the lease", func() {
		if st.Dialect() != store.Postgres {
			Skip("holding a request mid-write needs PostgreSQL's row locks")
		}
		lease := 300 * time.Millisecond
		short := newTenant()
		short.api = newAPI(server.Config{RateLimit: -1, IdempotencyLease: lease})
		acct := short.createAccount("Slow")
		path := "/accounts/" + acct + "/contacts"
		body := []byte(`{"phone_number":"+14155550143"}`)

		// The contact's insert waits for the test's uncommitted insert of the same contact: the
		// request is held mid-write for several leases.
		tx := holdContact(short, acct, "+14155550143")
		firstDone := make(chan *response, 1)
		go func() {
			defer GinkgoRecover()
			firstDone <- short.post(path, body, "Idempotency-Key", "slow")
		}()
		Eventually(func() int64 {
			var n int64
			Expect(st.DB().Raw(`SELECT COUNT(*) FROM idempotency_keys WHERE project_id = ? AND key = 'slow'`, short.ProjectID).Scan(&n).Error).To(Succeed())
			return n
		}).Should(BeEquivalentTo(1))
		time.Sleep(4 * lease)
		// Were the claim not renewed, this retry would take the key over and wait on the lock too.
		retryDone := make(chan *response, 1)
		go func() {
			defer GinkgoRecover()
			retryDone <- short.post(path, body, "Idempotency-Key", "slow")
		}()
		var retry *response
		Eventually(retryDone).WithTimeout(5 * time.Second).Should(Receive(&retry))
		Expect(tx.Rollback().Error).To(Succeed())
		Expect(retry).To(HaveError(http.StatusConflict, "idempotency_key_in_use"))
		var first *response
		Eventually(firstDone).WithTimeout(10 * time.Second).Should(Receive(&first))
		Expect(first).To(HaveStatus(http.StatusCreated), first.String())
		again := short.post(path, body, "Idempotency-Key", "slow")
		Expect(again.Header.Get("Idempotent-Replayed")).To(Equal("true"))
		Expect(again.JSON()["id"]).To(Equal(first.JSON()["id"]))
	})
})

// holdContact begins a transaction that inserts the account's contact with this phone number and
// leaves it uncommitted (PostgreSQL only): a request that creates the same contact waits in its
// insert, on the contacts' unique index, until the caller rolls the transaction back.
func holdContact(t *tenant, accountID, phone string) *gorm.DB {
	tx := st.DB().Begin()
	Expect(tx.Exec(`INSERT INTO contacts (id, project_id, account_id, phone_number, metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, '{}', now(), now())`, store.NewID(store.PrefixContact), t.ProjectID, accountID, phone).Error).To(Succeed())
	return tx
}
