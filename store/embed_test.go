package store_test

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("Embedded components' store", func() {
	It("maps times to TypeIDs that bound the ids minted then", func() {
		before := time.Now()
		id := store.NewID("evt")
		after := time.Now().Add(time.Millisecond)
		Expect(store.IDAt("evt", before) <= id).To(BeTrue())
		Expect(store.IDAt("evt", after) > id).To(BeTrue())
		Expect(store.TimeOfID(id)).To(BeTemporally("~", before, time.Millisecond))
		Expect(store.TimeOfID("not an id")).To(BeZero())
	})

	It("notifies a listener of the events of the accounts someone watches, and of nothing else", func(ctx context.Context) {
		got, cancel, done := listenEmbed(ctx, st)
		defer cancel()
		if got == nil {
			return
		}
		p, err := st.CreateProject(ctx, "listen")
		Expect(err).NotTo(HaveOccurred())
		watched, unwatched := store.NewID("acct"), store.NewID("acct")
		Expect(st.WatchAccounts(ctx, []string{watched}, time.Now().Add(time.Minute))).To(Succeed())
		record := func(acct string) {
			e, err := store.NewEvent(p.ID, acct, "message.received", map[string]string{"id": "msg_x"})
			Expect(err).NotTo(HaveOccurred())
			Expect(st.Tx(ctx, func(tx *store.Store) error { return tx.InsertEvents(ctx, []store.Event{e}) })).To(Succeed())
		}
		record(unwatched)
		record(watched)
		Eventually(got).Should(Receive(Equal(watched)))
		Consistently(got, 200*time.Millisecond).ShouldNot(Receive(), "the unwatched account notified nobody")

		By("notifying a read mark's account explicitly")
		Expect(st.NotifyEmbed(ctx, unwatched)).To(Succeed())
		Eventually(got).Should(Receive(Equal(unwatched)))

		By("ending the watch")
		Expect(st.PurgeEmbedWatches(ctx, time.Now().Add(2*time.Minute))).To(Succeed())
		record(watched)
		Consistently(got, 200*time.Millisecond).ShouldNot(Receive())
		cancel()
		Expect(errors.Is(<-done, context.Canceled)).To(BeTrue())
	})
})

// listenEmbed listens on the embeds' channel (store.ListenEmbed) until cancel, and returns the
// notified accounts as they come and the listener's end; got is nil on SQLite, which has no
// notifications (the streams poll).
func listenEmbed(ctx context.Context, st *store.Store) (got chan string, cancel func(), done chan error) {
	got = make(chan string, 20)
	lctx, cancel := context.WithCancel(ctx)
	ready := make(chan struct{})
	done = make(chan error, 1)
	go func() { done <- st.ListenEmbed(lctx, func() { close(ready) }, func(acct string) { got <- acct }) }()
	if st.Dialect() != store.Postgres {
		Expect(<-done).To(MatchError(store.ErrNoListen), "SQLite has no notifications: streams poll")
		return nil, cancel, done
	}
	Eventually(ready).Should(BeClosed())
	return got, cancel, done
}
