package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/riverqueue/river"
	"go.jetify.com/typeid"

	"github.com/switchboard/switchboard/store"
)

// The store's conformance suite: the same specs run on SQLite always and on PostgreSQL when
// SWITCHBOARD_TEST_DATABASE_URL is set (make test does both).
func TestStore(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Store Suite")
}

var st *store.Store

var _ = BeforeSuite(func(ctx context.Context) {
	var cleanup func()
	var err error
	st, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cleanup)
})

type pingArgs struct {
	N int `json:"n"`
}

func (pingArgs) Kind() string { return "store_test_ping" }

type pingWorker struct {
	river.WorkerDefaults[pingArgs]
	seen chan int
}

func (w *pingWorker) Work(_ context.Context, j *river.Job[pingArgs]) error {
	w.seen <- j.Args.N
	return nil
}

var _ = Describe("Migrations", func() {
	It("applies nothing the second time", func(ctx context.Context) {
		applied, err := st.Migrate(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(applied).To(BeEmpty())
		n, err := st.PendingMigrations(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeZero())
	})
})

var _ = Describe("Jobs", func() {
	It("enqueues a job with the transaction that commits, and none with one that rolls back", func(ctx context.Context) {
		w := &pingWorker{seen: make(chan int, 10)}
		workers := river.NewWorkers()
		river.AddWorker(workers, w)
		client, err := st.StartWorkers(ctx, store.WorkerConfig{Workers: workers})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) { Expect(client.Stop(ctx)).To(Succeed()) })

		p, err := st.CreateProject(ctx, "jobs")
		Expect(err).NotTo(HaveOccurred())
		boom := errors.New("boom")
		err = st.Tx(ctx, func(tx *store.Store) error {
			Expect(tx.CreateAccount(ctx, &store.Account{ProjectID: p.ID, Name: "rolled back"})).To(Succeed())
			Expect(tx.InsertJob(ctx, pingArgs{N: 1}, nil)).To(Succeed())
			return boom
		})
		Expect(err).To(MatchError(boom))
		Expect(st.Tx(ctx, func(tx *store.Store) error {
			Expect(tx.CreateAccount(ctx, &store.Account{ProjectID: p.ID, Name: "kept"})).To(Succeed())
			return tx.InsertJobs(ctx, []river.InsertManyParams{{Args: pingArgs{N: 2}}, {Args: pingArgs{N: 3}}})
		})).To(Succeed())

		var got []int
		Eventually(w.seen).WithTimeout(10 * time.Second).Should(Receive(BeElementOf(2, 3)))
		Eventually(w.seen).WithTimeout(10 * time.Second).Should(Receive(BeElementOf(2, 3)))
		Consistently(w.seen, 500*time.Millisecond).ShouldNot(Receive(&got))
		accounts, _, err := st.ListAccounts(ctx, p.ID, store.Page{})
		Expect(err).NotTo(HaveOccurred())
		Expect(accounts).To(HaveLen(1))
		Expect(accounts[0].Name).To(Equal("kept"))
	})
})

var _ = Describe("Identifiers", func() {
	It("mints TypeIDs whose text order is their creation order, even many per millisecond", func() {
		prev := store.NewID("acct")
		for range 100000 {
			id := store.NewID("acct")
			Expect(id > prev).To(BeTrue(), "%s after %s", id, prev)
			prev = id
		}
		u, err := typeid.FromString(prev)
		Expect(err).NotTo(HaveOccurred())
		Expect(u.Prefix()).To(Equal("acct"))
		Expect(u.UUID()[14:15]).To(Equal("7"), "a UUIDv7: %s", u.UUID())
	})
})
