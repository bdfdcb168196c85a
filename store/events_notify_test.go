package store_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// Every statement that records events on PostgreSQL notifies the embeds' channel of their account
// when an instance watches it (the live streams wake on it), whichever of the store's writers it
// is: the fan-out's own CTE (eventsFanout) in the send's, the dispatch's, the receipts' and
// InsertEvents' statements, and InsertEventFor.
var _ = Describe("Events of a watched account", func() {
	It("notify the listener from every statement that records events, once a transaction", func(ctx context.Context) {
		st, project, account := storeWithAccount(ctx, "notify")
		got, cancel, _ := listenEmbed(ctx, st)
		defer cancel()
		if got == nil {
			return
		}
		Expect(st.WatchAccounts(ctx, []string{account}, time.Now().Add(time.Minute))).To(Succeed())
		now := time.Now().UTC().Truncate(time.Millisecond)
		ep := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: project, URL: "https://hooks.example/n",
			Secret: "whsec_n", Enabled: true, CreatedAt: now, UpdatedAt: now}
		Expect(st.CreateWebhookEndpoint(ctx, ep)).To(Succeed())
		event := func(typ string) store.Event {
			e, err := store.NewEvent(project, account, typ, map[string]string{"id": "msg_x"})
			Expect(err).NotTo(HaveOccurred())
			return e
		}
		notified := func(what string) {
			Eventually(got).Should(Receive(Equal(account)), what)
			Consistently(got, 100*time.Millisecond).ShouldNot(Receive(), what+": once")
		}

		Expect(st.InsertEvents(ctx, []store.Event{event("message.received"), event("message.received")})).To(Succeed())
		notified("InsertEvents")
		Expect(st.Tx(ctx, func(tx *store.Store) error { return tx.InsertEvents(ctx, []store.Event{event("message.received")}) })).To(Succeed())
		notified("InsertEvents in a transaction")
		Expect(st.Tx(ctx, func(tx *store.Store) error {
			e := event("message.sent")
			_, err := tx.InsertEventFor(ctx, &e, ep.ID)
			return err
		})).To(Succeed())
		notified("InsertEventFor")

		number := &store.PhoneNumber{ProjectID: project, AccountID: &account, Number: "+18005550199", Type: store.NumberTollFree,
			Country: "US", Carrier: "sim"}
		Expect(st.InsertPhoneNumber(ctx, number)).To(Succeed())
		to := "+16475550199"
		c := store.Contact{ID: store.NewID(store.PrefixContact), ProjectID: project, AccountID: account, PhoneNumber: to,
			Metadata: store.Metadata{}, CreatedAt: now, UpdatedAt: now}
		cv := store.Conversation{ID: store.NewID(store.PrefixConversation), ProjectID: project, AccountID: account,
			PhoneNumberID: number.ID, ContactID: c.ID, CreatedAt: now}
		body := "hello"
		m := &store.Message{ID: store.NewID(store.PrefixMessage), ProjectID: project, AccountID: account, ConversationID: cv.ID,
			PhoneNumberID: number.ID, SenderType: number.Type, ContactID: c.ID, Direction: store.DirectionOutbound,
			Status: store.StatusQueued, Body: &body, Metadata: store.Metadata{}, Encoding: "gsm7", Segments: 1, Type: "sms",
			FromNumber: number.Number, ToNumber: to, Carrier: "sim", CreatedAt: now, UpdatedAt: now}
		written, err := st.InsertOutboundBatch(ctx, []store.OutboundSend{{Message: m,
			New: &store.NewPair{Contact: c, Conversation: cv, Event: event("conversation.created")}}})
		Expect(err).NotTo(HaveOccurred())
		Expect(written).To(Equal([]bool{true}))
		notified("the send's statement")

		works, err := st.ClaimOutbound(ctx, store.OutboundCriteria{Now: now.Add(time.Second), Limit: 10, Lease: time.Minute,
			Unpaced: []string{store.NumberTollFree}, Expiry: 24 * time.Hour})
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(HaveLen(1))
		Expect(st.RecordSent(ctx, []store.Sent{{ID: m.ID, CarrierID: "sim-n", Event: event("message.sent"), QueueRow: works[0].QueueRow}},
			now.Add(2*time.Second))).To(Succeed())
		notified("the record of the submissions")

		Expect(st.FinishOutbound(ctx, []store.Outcome{{ID: m.ID, Status: store.StatusDelivered, At: now.Add(3 * time.Second)}},
			store.OutcomeRules{}, func(fin []*store.Finished) ([]store.Event, error) {
				Expect(fin[0]).NotTo(BeNil())
				return []store.Event{event("message.delivered")}, nil
			})).To(Succeed())
		notified("the receipts' statement")
	})
})
