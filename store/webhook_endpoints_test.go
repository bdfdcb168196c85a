package store_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// An endpoint's deliveries refer to it: on SQLite by a foreign key, on PostgreSQL by a guard on
// the endpoint's side (migration 0030), which spares the fan-out a check of every delivery it
// writes. Nothing in Switchboard deletes an endpoint; these specs delete one by hand, as an
// operator could.
var _ = Describe("A webhook endpoint with deliveries", func() {
	var (
		ctx     = context.Background()
		st      *store.Store
		now     time.Time
		project string
		account string
	)

	BeforeEach(func() {
		st, project, account = storeWithAccount(ctx, "endpoints")
		now = time.Now().UTC().Truncate(time.Millisecond)
	})

	endpoint := func() string {
		e := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: project, URL: "https://hooks.example/e",
			Secret: "whsec_e", Enabled: true, CreatedAt: now, UpdatedAt: now}
		Expect(st.CreateWebhookEndpoint(ctx, e)).To(Succeed())
		return e.ID
	}
	// deliver records an event with a delivery to endpoint id inside tx.
	deliver := func(tx *store.Store, id string) error {
		ev, err := store.NewEvent(project, account, "message.sent", map[string]string{"id": "msg_x"})
		if err != nil {
			return err
		}
		_, err = tx.InsertEventFor(ctx, &ev, id)
		return err
	}
	deliveriesOf := func(id string) int64 {
		var n int64
		Expect(st.DB().Raw("SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ?", id).Scan(&n).Error).To(Succeed())
		return n
	}
	endpoints := func(id string) int64 {
		var n int64
		Expect(st.DB().Raw("SELECT COUNT(*) FROM webhook_endpoints WHERE id = ?", id).Scan(&n).Error).To(Succeed())
		return n
	}
	// refused is what each database says when a row that others refer to is deleted.
	refused := func() string {
		if st.Dialect() == store.Postgres {
			return "SQLSTATE 23503"
		}
		return "violates foreign key constraint" // gorm.ErrForeignKeyViolated
	}

	It("cannot be deleted or renumbered, as with a foreign key; one without deliveries can be deleted", func() {
		used, unused := endpoint(), endpoint()
		Expect(st.Tx(ctx, func(tx *store.Store) error { return deliver(tx, used) })).To(Succeed())

		err := st.DB().Exec("DELETE FROM webhook_endpoints WHERE id = ?", used).Error
		Expect(err).To(MatchError(ContainSubstring(refused())))
		err = st.DB().Exec("UPDATE webhook_endpoints SET id = ? WHERE id = ?", "whe_renumbered", used).Error
		Expect(err).To(MatchError(ContainSubstring(refused())))
		Expect(endpoints(used)).To(Equal(int64(1)))
		Expect(deliveriesOf(used)).To(Equal(int64(1)))

		// Other changes of the endpoint are free.
		Expect(st.DB().Exec("UPDATE webhook_endpoints SET id = id, enabled = ? WHERE id = ?", false, used).Error).To(Succeed())
		Expect(st.DB().Exec("DELETE FROM webhook_endpoints WHERE id = ?", unused).Error).To(Succeed())
		Expect(endpoints(unused)).To(BeZero())
	})

	It("is not deleted while a transaction writes a delivery to it (PostgreSQL): the delete waits, then sees it", func() {
		if st.Dialect() != store.Postgres {
			Skip("SQLite has one writer at a time")
		}
		id := endpoint()
		written, release := make(chan struct{}), make(chan struct{})
		txDone := make(chan error, 1)
		go func() {
			defer GinkgoRecover()
			txDone <- st.Tx(ctx, func(tx *store.Store) error {
				if err := deliver(tx, id); err != nil {
					return err
				}
				close(written)
				<-release
				return nil
			})
		}()
		Eventually(written).Within(10 * time.Second).Should(BeClosed())
		delDone := make(chan error, 1)
		go func() { delDone <- st.DB().Exec("DELETE FROM webhook_endpoints WHERE id = ?", id).Error }()
		// The delete waits for the writing transaction's lock on webhook_deliveries.
		Eventually(func() int64 {
			var n int64
			Expect(st.DB().Raw(`SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
				AND query LIKE 'DELETE FROM webhook_endpoints%'`).Scan(&n).Error).To(Succeed())
			return n
		}).Within(10 * time.Second).Should(Equal(int64(1)))
		close(release)
		Eventually(txDone).Within(10 * time.Second).Should(Receive(BeNil()))
		var err error
		Eventually(delDone).Within(10 * time.Second).Should(Receive(&err))
		Expect(err).To(MatchError(ContainSubstring(refused())))
		Expect(endpoints(id)).To(Equal(int64(1)))
		Expect(deliveriesOf(id)).To(Equal(int64(1)))
	})
})

// storeWithAccount opens a database of the spec's own (DeferCleanup closes it) with a project and
// an account named name, and returns their ids.
func storeWithAccount(ctx context.Context, name string) (st *store.Store, project, account string) {
	st, cleanup, err := store.OpenTest(ctx, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cleanup)
	p, err := st.CreateProject(ctx, name)
	Expect(err).NotTo(HaveOccurred())
	a := &store.Account{ProjectID: p.ID, Name: name}
	Expect(st.CreateAccount(ctx, a)).To(Succeed())
	return st, p.ID, a.ID
}
