package store_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	"github.com/riverqueue/river"

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

type optsArgs struct {
	N int `json:"n"`
}

func (optsArgs) Kind() string { return "store_test_opts" }

func (optsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: "store_test", Priority: 2}
}

type uniqueArgs struct {
	N int `json:"n"`
}

func (uniqueArgs) Kind() string { return "store_test_unique" }

func (uniqueArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: "store_test", UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

var _ = Describe("Job options", func() {
	type jobRow struct {
		Args        string
		Queue       string
		Priority    int
		MaxAttempts int
		State       string
		ScheduledAt time.Time
	}
	rows := func(ctx context.Context, kind string) []jobRow {
		var out []jobRow
		Expect(st.DB().WithContext(ctx).Raw(`SELECT args, queue, priority, max_attempts, state, scheduled_at FROM river_job
			WHERE kind = ? ORDER BY id`, kind).Scan(&out).Error).To(Succeed())
		return out
	}

	It("writes the insert's options over the args' own over River's defaults", func(ctx context.Context) {
		later := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		Expect(st.Tx(ctx, func(tx *store.Store) error {
			return tx.InsertJobs(ctx, []river.InsertManyParams{
				{Args: optsArgs{N: 1}},
				{Args: optsArgs{N: 2}, InsertOpts: &river.InsertOpts{MaxAttempts: 3, Priority: 4}},
				{Args: optsArgs{N: 3}, InsertOpts: &river.InsertOpts{ScheduledAt: later}},
			})
		})).To(Succeed())
		got := rows(ctx, "store_test_opts")
		Expect(got).To(HaveLen(3))
		Expect(got[0].Args).To(MatchJSON(`{"n":1}`))
		Expect(got[0]).To(MatchFields(IgnoreExtras, Fields{"Queue": Equal("store_test"), "Priority": Equal(2),
			"MaxAttempts": Equal(river.MaxAttemptsDefault), "State": Equal("available")}))
		Expect(got[1]).To(MatchFields(IgnoreExtras, Fields{"Priority": Equal(4), "MaxAttempts": Equal(3), "State": Equal("available")}))
		Expect(got[2].State).To(Equal("scheduled"))
		Expect(got[2].ScheduledAt).To(BeTemporally("~", later, time.Second))
	})

	It("leaves jobs with unique options to River, which inserts a duplicate once", func(ctx context.Context) {
		for range 2 {
			Expect(st.InsertJob(ctx, uniqueArgs{N: 7}, nil)).To(Succeed())
		}
		Expect(rows(ctx, "store_test_unique")).To(HaveLen(1))
	})
})

var _ = Describe("Events", func() {
	It("fans a batch of more events than one statement holds out to every subscribed endpoint", func(ctx context.Context) {
		p, err := st.CreateProject(ctx, "events")
		Expect(err).NotTo(HaveOccurred())
		now := time.Now().UTC()
		all := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: p.ID, URL: "https://example.com/all",
			Secret: "whsec_x", Enabled: true, CreatedAt: now, UpdatedAt: now}
		other := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: p.ID, URL: "https://example.com/other",
			Events: "message.failed", Secret: "whsec_y", Enabled: true, CreatedAt: now, UpdatedAt: now}
		Expect(st.CreateWebhookEndpoint(ctx, all)).To(Succeed())
		Expect(st.CreateWebhookEndpoint(ctx, other)).To(Succeed())
		evs := make([]store.Event, 1500)
		for i := range evs {
			evs[i], err = store.NewEvent(p.ID, "acct_x", "message.sent", map[string]int{"n": i})
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(st.Tx(ctx, func(tx *store.Store) error { return tx.InsertEvents(ctx, evs) })).To(Succeed())
		var deliveries, jobs int64
		Expect(st.DB().WithContext(ctx).Raw(`SELECT COUNT(*) FROM webhook_deliveries WHERE project_id = ? AND endpoint_id = ?`,
			p.ID, all.ID).Scan(&deliveries).Error).To(Succeed())
		Expect(deliveries).To(BeEquivalentTo(1500))
		Expect(st.DB().WithContext(ctx).Raw(`SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ?`, other.ID).
			Scan(&deliveries).Error).To(Succeed())
		Expect(deliveries).To(BeZero(), "an endpoint gets only the types it subscribed to")
		Expect(st.DB().WithContext(ctx).Raw(`SELECT COUNT(*) FROM webhook_deliveries d JOIN webhook_queue q ON q.delivery_id = d.id
			WHERE d.project_id = ? AND d.status = 'pending' AND d.next_attempt_at IS NOT NULL AND q.due_at <= ?`, p.ID, time.Now()).
			Scan(&deliveries).Error).To(Succeed())
		Expect(deliveries).To(BeEquivalentTo(1500), "every delivery is due, in the webhook queue")
		Expect(st.DB().WithContext(ctx).Raw(`SELECT COUNT(*) FROM river_job WHERE kind = 'webhook_delivery'`).Scan(&jobs).Error).To(Succeed())
		Expect(jobs).To(BeZero(), "no job per delivery")
	})

	It("gives each subscribed endpoint, however many, one delivery of each event, due at once", func(ctx context.Context) {
		p, err := st.CreateProject(ctx, "many endpoints")
		Expect(err).NotTo(HaveOccurred())
		q, err := st.CreateProject(ctx, "another project")
		Expect(err).NotTo(HaveOccurred())
		now := time.Now().UTC()
		endpoint := func(project, events string, enabled bool) string {
			e := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: project, URL: "https://example.com/" + events,
				Events: events, Secret: "whsec_x", Enabled: enabled, CreatedAt: now, UpdatedAt: now}
			Expect(st.CreateWebhookEndpoint(ctx, e)).To(Succeed())
			return e.ID
		}
		// Five endpoints get every event: more than the ids one statement brings per event.
		var everything []string
		for range 5 {
			everything = append(everything, endpoint(p.ID, "", true))
		}
		listed := endpoint(p.ID, "message.failed,contact.opted_out", true)
		disabled := endpoint(p.ID, "", false)
		elsewhere := endpoint(q.ID, "", true)
		var evs []store.Event
		for _, typ := range []string{"message.sent", "contact.opted_out", "message.sent"} {
			e, err := store.NewEvent(p.ID, "acct_x", typ, map[string]string{"t": typ})
			Expect(err).NotTo(HaveOccurred())
			evs = append(evs, e)
		}
		Expect(st.Tx(ctx, func(tx *store.Store) error { return tx.InsertEvents(ctx, evs) })).To(Succeed())

		var ds []store.WebhookDelivery
		Expect(st.DB().WithContext(ctx).Where("project_id IN ?", []string{p.ID, q.ID}).Find(&ds).Error).To(Succeed())
		got := map[string][]string{} // endpoint → its deliveries' event ids
		ids := map[string]bool{}
		for _, d := range ds {
			got[d.EndpointID] = append(got[d.EndpointID], d.EventID)
			ids[d.ID] = true
			Expect(d.Status).To(Equal(store.DeliveryPending))
			Expect(d.Attempts).To(BeZero())
			Expect(d.ProjectID).To(Equal(p.ID))
		}
		for _, id := range everything {
			Expect(got[id]).To(ConsistOf(evs[0].ID, evs[1].ID, evs[2].ID))
		}
		Expect(got[listed]).To(ConsistOf(evs[1].ID), "a listed type only")
		Expect(got).NotTo(HaveKey(disabled))
		Expect(got).NotTo(HaveKey(elsewhere))
		Expect(ids).To(HaveLen(16), "every delivery has its own id")

		for _, d := range ds {
			Expect(d.NextAttemptAt).NotTo(BeNil(), "delivery %s is due", d.ID)
			Expect(*d.NextAttemptAt).To(BeTemporally("<=", time.Now()))
		}
		var queued int64
		Expect(st.DB().WithContext(ctx).Raw(`SELECT COUNT(*) FROM webhook_queue WHERE delivery_id IN ? AND due_at <= ?`,
			slices.Collect(maps.Keys(ids)), time.Now()).Scan(&queued).Error).To(Succeed())
		Expect(queued).To(BeEquivalentTo(16), "every delivery is due in the webhook queue")
	})
})
