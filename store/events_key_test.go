package store_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// A webhook delivery refers to its event: on SQLite by a foreign key, on PostgreSQL by a guard on
// the event's side (migration 0032) and a lock that the writer of deliveries for existing events
// takes, which spares the fan-out a check of every delivery it writes. Retention deletes events
// with their deliveries; these specs delete by hand, as an operator could.
var _ = Describe("An event with webhook deliveries", func() {
	var (
		ctx      = context.Background()
		st       *store.Store
		now      time.Time
		project  string
		account  string
		endpoint string
	)

	BeforeEach(func() {
		st, project, account = storeWithAccount(ctx, "event-key")
		now = time.Now().UTC().Truncate(time.Millisecond)
		e := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: project, URL: "https://hooks.example/e",
			Events: "message.sent", Secret: "whsec_e", Enabled: true, CreatedAt: now, UpdatedAt: now}
		Expect(st.CreateWebhookEndpoint(ctx, e)).To(Succeed())
		endpoint = e.ID
	})

	// publish records an event of type typ (fanned out to the endpoint when it is message.sent).
	publish := func(typ string) string {
		ev, err := store.NewEvent(project, account, typ, map[string]string{"id": "msg_x"})
		Expect(err).NotTo(HaveOccurred())
		evs := []store.Event{ev}
		Expect(st.InsertEvents(ctx, evs)).To(Succeed())
		return evs[0].ID
	}
	// replay writes another delivery of event id to the endpoint inside tx, as a replay does.
	replay := func(tx *store.Store, id string) error {
		return tx.InsertWebhookDeliveries(ctx, []store.WebhookDelivery{store.PendingDelivery(project, endpoint, id, "message.sent", now)})
	}
	deliveriesOf := func(id string) int64 {
		var n int64
		Expect(st.DB().Raw("SELECT COUNT(*) FROM webhook_deliveries WHERE event_id = ?", id).Scan(&n).Error).To(Succeed())
		return n
	}
	events := func(id string) int64 {
		var n int64
		Expect(st.DB().Raw("SELECT COUNT(*) FROM events WHERE id = ?", id).Scan(&n).Error).To(Succeed())
		return n
	}
	refused := func() string {
		if st.Dialect() == store.Postgres {
			return "SQLSTATE 23503"
		}
		return "violates foreign key constraint" // gorm.ErrForeignKeyViolated
	}
	// waitingFor waits until one statement of this database that starts with prefix waits for a lock.
	waitingFor := func(prefix string) {
		Eventually(func() int64 {
			var n int64
			Expect(st.DB().Raw(`SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
				AND query LIKE ?`, prefix+"%").Scan(&n).Error).To(Succeed())
			return n
		}).Within(10 * time.Second).Should(Equal(int64(1)))
	}

	It("cannot be deleted or renumbered, as with a foreign key; one without deliveries can be deleted", func() {
		used, unused := publish("message.sent"), publish("conversation.created")
		Expect(deliveriesOf(used)).To(Equal(int64(1)))
		Expect(deliveriesOf(unused)).To(BeZero())

		Expect(st.DB().Exec("DELETE FROM events WHERE id = ?", used).Error).To(MatchError(ContainSubstring(refused())))
		Expect(st.DB().Exec("UPDATE events SET id = ? WHERE id = ?", "evt_renumbered", used).Error).To(MatchError(ContainSubstring(refused())))
		Expect(events(used)).To(Equal(int64(1)))

		Expect(st.DB().Exec("UPDATE events SET id = id, data = ? WHERE id = ?", `{"id":"msg_y"}`, used).Error).To(Succeed())
		Expect(st.DB().Exec("DELETE FROM events WHERE id = ?", unused).Error).To(Succeed())
		Expect(events(unused)).To(BeZero())
		// Without its deliveries, the event goes.
		Expect(st.DB().Exec("DELETE FROM webhook_deliveries WHERE event_id = ?", used).Error).To(Succeed())
		Expect(st.DB().Exec("DELETE FROM events WHERE id = ?", used).Error).To(Succeed())
	})

	It("gets no delivery once gone", func() {
		id := publish("conversation.created")
		Expect(st.DB().Exec("DELETE FROM events WHERE id = ?", id).Error).To(Succeed())
		err := st.Tx(ctx, func(tx *store.Store) error { return replay(tx, id) })
		Expect(err).To(MatchError(ContainSubstring(refused())))
		Expect(deliveriesOf(id)).To(BeZero())
	})

	// hold runs fn in a transaction that stays open until release is called; done receives its end.
	hold := func(fn func(tx *store.Store) error) (release func(), done chan error) {
		ran, free := make(chan struct{}), make(chan struct{})
		done = make(chan error, 1)
		go func() {
			defer GinkgoRecover()
			done <- st.Tx(ctx, func(tx *store.Store) error {
				if err := fn(tx); err != nil {
					return err
				}
				close(ran)
				<-free
				return nil
			})
		}()
		Eventually(ran).Within(10 * time.Second).Should(BeClosed())
		return func() { close(free) }, done
	}
	// inTurn starts fn, waits until it waits for a lock (its statement starts with prefix), and
	// returns what fn returns once release lets the held transaction end first.
	inTurn := func(release func(), prefix string, fn func() error) error {
		done := make(chan error, 1)
		go func() { done <- fn() }()
		waitingFor(prefix)
		release()
		var err error
		Eventually(done).Within(10 * time.Second).Should(Receive(&err))
		return err
	}

	It("is not deleted while a transaction writes a delivery of it (PostgreSQL): the delete waits, then sees it", func() {
		if st.Dialect() != store.Postgres {
			Skip("SQLite has one writer at a time")
		}
		id := publish("conversation.created")
		release, written := hold(func(tx *store.Store) error { return replay(tx, id) })
		err := inTurn(release, "DELETE FROM events", func() error { return st.DB().Exec("DELETE FROM events WHERE id = ?", id).Error })
		Expect(written).To(Receive(BeNil()))
		Expect(err).To(MatchError(ContainSubstring(refused())))
		Expect(events(id)).To(Equal(int64(1)))
		Expect(deliveriesOf(id)).To(Equal(int64(1)))
	})

	It("gets no delivery while it is being deleted (PostgreSQL): the writer waits, then finds it gone", func() {
		if st.Dialect() != store.Postgres {
			Skip("SQLite has one writer at a time")
		}
		id := publish("conversation.created")
		release, deleted := hold(func(tx *store.Store) error { return tx.DB().Exec("DELETE FROM events WHERE id = ?", id).Error })
		err := inTurn(release, "SELECT id FROM events", func() error { return st.Tx(ctx, func(tx *store.Store) error { return replay(tx, id) }) })
		Expect(deleted).To(Receive(BeNil()))
		Expect(err).To(MatchError(ContainSubstring(refused())))
		Expect(events(id)).To(BeZero())
		Expect(deliveriesOf(id)).To(BeZero())
	})
})
