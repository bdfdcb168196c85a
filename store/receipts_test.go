package store_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// FinishOutbound records carriers' outcomes; the service's specs (server/receipts_test.go) follow
// the events it leads to, these the store's side of a receipt that meets the dispatch's record of
// the submission.
var _ = Describe("Recording outcomes", func() {
	var (
		ctx    = context.Background()
		st     *store.Store
		now    time.Time
		msg    store.Message
		rules  = store.OutcomeRules{BlockReasons: []string{"invalid_number"}, BlockFor: time.Hour}
		status = func() (string, *time.Time) {
			var m store.Message
			Expect(st.DB().Where("id = ?", msg.ID).First(&m).Error).To(Succeed())
			return m.Status, m.SentAt
		}
	)

	BeforeEach(func() {
		var project, account string
		st, project, account = storeWithAccount(ctx, "receipts")
		now = time.Now().UTC().Truncate(time.Millisecond)
		number := store.PhoneNumber{ID: store.NewID("pn"), ProjectID: project, AccountID: &account, Number: "+15550100000",
			Type: "local", Country: "US", Carrier: "sim", CreatedAt: now, UpdatedAt: now}
		Expect(st.InsertPhoneNumber(ctx, &number)).To(Succeed())
		body := "hello"
		msg = store.Message{ID: store.NewID("msg"), ProjectID: project, AccountID: account, PhoneNumberID: number.ID,
			SenderType: "local", Direction: store.DirectionOutbound, Status: store.StatusQueued, Body: &body, Encoding: "gsm7",
			Segments: 1, Type: "sms", FromNumber: number.Number, ToNumber: "+15550200001", Carrier: "sim", CreatedAt: now, UpdatedAt: now}
		Expect(st.Tx(ctx, func(tx *store.Store) error {
			pair, err := tx.ResolvePair(ctx, store.Contact{ProjectID: project, AccountID: account, PhoneNumber: msg.ToNumber}, number.ID, now, nil)
			if err != nil {
				return err
			}
			msg.ContactID, msg.ConversationID = pair.Contact.ID, pair.Conversation.ID
			return tx.InsertMessage(ctx, &msg, nil)
		})).To(Succeed())
		works, err := st.ClaimOutbound(ctx, store.OutboundCriteria{Now: now.Add(time.Second), Limit: 10, Lease: time.Minute,
			Unpaced: []string{"local"}, Expiry: 24 * time.Hour})
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(HaveLen(1))
		Expect(status()).To(Equal(store.StatusSending))
	})

	// finish records msg delivered at, and returns what FinishOutbound handed to its events.
	finish := func(at time.Time) ([]*store.Finished, error) {
		var got []*store.Finished
		err := st.FinishOutbound(ctx, []store.Outcome{{ID: msg.ID, Status: store.StatusDelivered, At: at}}, rules,
			func(fin []*store.Finished) ([]store.Event, error) {
				got = fin
				return nil, nil
			})
		return got, err
	}

	It("records the sent step with an outcome that overtakes it, once", func() {
		fin, err := finish(now.Add(2 * time.Second))
		Expect(err).NotTo(HaveOccurred())
		Expect(fin).To(HaveLen(1))
		Expect(fin[0]).NotTo(BeNil())
		Expect(fin[0].WasSending).To(BeTrue())
		Expect(fin[0].Status).To(Equal(store.StatusDelivered))
		st1, sentAt := status()
		Expect(st1).To(Equal(store.StatusDelivered))
		Expect(sentAt).NotTo(BeNil())

		fin, err = finish(now.Add(3 * time.Second))
		Expect(err).NotTo(HaveOccurred())
		Expect(fin).To(Equal([]*store.Finished{nil}))
	})

	It("records an outcome whose message another transaction records sent meanwhile, as coming after it (PostgreSQL)", func() {
		if st.Dialect() != store.Postgres {
			Skip("SQLite has one writer at a time")
		}
		sentAt := now.Add(time.Second)
		written, release := make(chan struct{}), make(chan struct{})
		txDone := make(chan error, 1)
		go func() {
			defer GinkgoRecover()
			txDone <- st.Tx(ctx, func(tx *store.Store) error {
				if err := tx.DB().Exec("UPDATE messages SET status = ?, sent_at = ?, updated_at = ? WHERE id = ?",
					store.StatusSent, sentAt, sentAt, msg.ID).Error; err != nil {
					return err
				}
				close(written)
				<-release
				return nil
			})
		}()
		Eventually(written).Within(10 * time.Second).Should(BeClosed())
		type result struct {
			fin []*store.Finished
			err error
		}
		done := make(chan result, 1)
		go func() {
			fin, err := finish(now.Add(2 * time.Second))
			done <- result{fin, err}
		}()
		// The outcome's statement read the message as `sending` and waits for its lock.
		Eventually(func() int64 {
			var n int64
			Expect(st.DB().Raw(`SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
				AND query LIKE 'WITH v AS%'`).Scan(&n).Error).To(Succeed())
			return n
		}).Within(10 * time.Second).Should(Equal(int64(1)))
		close(release)
		Eventually(txDone).Within(10 * time.Second).Should(Receive(BeNil()))
		var r result
		Eventually(done).Within(10 * time.Second).Should(Receive(&r))
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.fin).To(HaveLen(1))
		Expect(r.fin[0]).NotTo(BeNil())
		Expect(r.fin[0].WasSending).To(BeFalse())
		Expect(r.fin[0].SentAt).To(HaveValue(BeTemporally("==", sentAt)))
		st1, _ := status()
		Expect(st1).To(Equal(store.StatusDelivered))
	})
	It("wakes the webhook deliverers once the outcome's deliveries are committed", func() {
		Expect(st.CreateWebhookEndpoint(ctx, &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: msg.ProjectID,
			URL: "https://hooks.example/receipts", Events: "message.delivered", Secret: "whsec_x", Enabled: true})).To(Succeed())
		// A deliverer woken claims at once: what it can see then is what the wake-up announced.
		visible := make(chan int64, 4)
		cancel := st.OnNotify(store.WakeWebhooks, func(string) {
			var n int64
			Expect(st.DB().Raw("SELECT COUNT(*) FROM webhook_queue").Scan(&n).Error).To(Succeed())
			visible <- n
		})
		defer cancel()
		Expect(st.FinishOutbound(ctx, []store.Outcome{{ID: msg.ID, Status: store.StatusDelivered, At: now.Add(time.Second)}}, rules,
			func(fin []*store.Finished) ([]store.Event, error) {
				e, err := store.NewEvent(msg.ProjectID, msg.AccountID, "message.delivered", map[string]string{"id": msg.ID})
				return []store.Event{e}, err
			})).To(Succeed())
		Expect(visible).To(Receive(Equal(int64(1))))
	})
})
