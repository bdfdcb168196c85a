package store_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// Retention prunes whole tables, so each spec has a database of its own.
var _ = Describe("Retention", func() {
	const day = 24 * time.Hour
	var (
		ctx     = context.Background()
		st      *store.Store
		now     time.Time
		project string
		seq     time.Duration
	)
	retention := store.Retention{APILogs: 30 * day, WebhookDeliveries: 30 * day, Events: 90 * day}

	BeforeEach(func() {
		var cleanup func()
		var err error
		st, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cleanup)
		now = time.Now().UTC()
		p, err := st.CreateProject(ctx, "retention")
		Expect(err).NotTo(HaveOccurred())
		project = p.ID
	})

	// idAt mints a distinct id of a record created at t.
	idAt := func(prefix string, t time.Time) string {
		seq += time.Millisecond
		return store.IDAt(prefix, t.Add(seq))
	}
	// event records an event created age ago and returns its id.
	event := func(age time.Duration) string {
		at := now.Add(-age)
		id := idAt(store.PrefixEvent, at)
		Expect(st.DB().Exec(`INSERT INTO events (id, project_id, account_id, type, data, created_at) VALUES (?, ?, 'acct_x', 'message.sent', '{}', ?)`,
			id, project, at).Error).To(Succeed())
		return id
	}
	endpoint := func() string {
		e := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: project, URL: "https://hooks.example/x",
			Secret: "whsec_x", Enabled: true, CreatedAt: now, UpdatedAt: now}
		Expect(st.CreateWebhookEndpoint(ctx, e)).To(Succeed())
		return e.ID
	}
	// delivery records a delivery of an event to an endpoint, created age ago, in a status.
	delivery := func(endpointID, eventID, status string, age time.Duration) string {
		at := now.Add(-age)
		id := idAt(store.PrefixWebhookDelivery, at)
		Expect(st.DB().Exec(`INSERT INTO webhook_deliveries (id, project_id, endpoint_id, event_id, event_type, status, attempts,
			created_at, updated_at) VALUES (?, ?, ?, ?, 'message.sent', ?, 1, ?, ?)`, id, project, endpointID, eventID, status, at, at).Error).
			To(Succeed())
		return id
	}
	exists := func(table, id string) bool {
		var n int64
		Expect(st.DB().Raw("SELECT COUNT(*) FROM "+table+" WHERE id = ?", id).Scan(&n).Error).To(Succeed())
		return n == 1
	}
	// apiLogs writes request logs of the given ages, in the order given (as the server writes
	// them: oldest first).
	apiLogs := func(ages ...time.Duration) {
		var logs []store.APILog
		for _, a := range ages {
			logs = append(logs, store.APILog{ProjectID: project, KeyID: "key_x", RequestID: "req_retention", Method: "GET",
				Path: "/accounts", Status: 200, CreatedAt: now.Add(-a)})
		}
		Expect(st.InsertAPILogs(ctx, logs)).To(Succeed())
	}
	countLogs := func() int64 {
		var n int64
		Expect(st.DB().Raw("SELECT COUNT(*) FROM api_logs WHERE project_id = ?", project).Scan(&n).Error).To(Succeed())
		return n
	}

	It("deletes each kind past its retention, in bounded batches, and keeps the rest", func() {
		apiLogs(100*day, 60*day, 45*day, 31*day, 31*day, 29*day, time.Hour)
		ep := endpoint()
		oldDelivered := event(100 * day)
		dOldDelivered := delivery(ep, oldDelivered, store.DeliverySucceeded, 100*day)
		oldFailed := event(95 * day)
		dOldFailed := delivery(ep, oldFailed, store.DeliveryFailed, 95*day)
		oldReplaying := event(91 * day)
		dOldReplaying := delivery(ep, oldReplaying, store.DeliveryPending, 91*day)
		oldAlone := event(120 * day)
		middle := event(40 * day)
		dMiddleDelivered := delivery(ep, middle, store.DeliverySucceeded, 40*day)
		dMiddleFailed := delivery(ep, middle, store.DeliveryFailed, 40*day)
		recent := event(time.Hour)
		dRecent := delivery(ep, recent, store.DeliverySucceeded, time.Hour)

		n, err := st.Prune(ctx, retention, now, store.PruneLimits{Batch: 2})
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(store.Pruned{APILogs: 5, Events: 3, WebhookDeliveries: 3}))
		Expect(countLogs()).To(BeEquivalentTo(2), "29 days and an hour old")

		for _, gone := range []string{oldDelivered, oldFailed, oldAlone} {
			Expect(exists("events", gone)).To(BeFalse(), gone)
		}
		for _, gone := range []string{dOldDelivered, dOldFailed, dMiddleDelivered} {
			Expect(exists("webhook_deliveries", gone)).To(BeFalse(), gone)
		}
		Expect(exists("events", oldReplaying)).To(BeTrue(), "an event with a delivery pending stays")
		Expect(exists("webhook_deliveries", dOldReplaying)).To(BeTrue())
		Expect(exists("events", middle)).To(BeTrue(), "within 90 days")
		Expect(exists("webhook_deliveries", dMiddleFailed)).To(BeTrue(), "a failed delivery stays replayable while its event does")
		Expect(exists("events", recent)).To(BeTrue())
		Expect(exists("webhook_deliveries", dRecent)).To(BeTrue())

		again, err := st.Prune(ctx, retention, now, store.PruneLimits{Batch: 2})
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(Equal(store.Pruned{}))
	})

	It("deletes at most a run's batches, leaving the rest to the next run", func() {
		apiLogs(40*day, 40*day, 40*day, 40*day, 40*day)
		n, err := st.Prune(ctx, store.Retention{APILogs: 30 * day}, now, store.PruneLimits{Batch: 2, MaxBatches: 1})
		Expect(err).NotTo(HaveOccurred())
		Expect(n.APILogs).To(BeEquivalentTo(2))
		Expect(countLogs()).To(BeEquivalentTo(3))
		n, err = st.Prune(ctx, store.Retention{APILogs: 30 * day}, now, store.PruneLimits{Batch: 2})
		Expect(err).NotTo(HaveOccurred())
		Expect(n.APILogs).To(BeEquivalentTo(3))
	})

	It("deletes console sessions a week after they ended, whatever the retention", func() {
		u := &store.ConsoleUser{ID: store.NewID(store.PrefixConsoleUser), Email: "ops@example.test", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}
		Expect(st.CreateConsoleUser(ctx, u)).To(Succeed())
		session := func(expires time.Time, revoked *time.Time) string {
			cs := &store.ConsoleSession{ID: store.NewID(store.PrefixConsoleSession), TokenHash: store.NewID("tok"), UserID: u.ID,
				CreatedAt: now.Add(-30 * day), LastSeenAt: now.Add(-30 * day), ExpiresAt: expires, RevokedAt: revoked}
			Expect(st.CreateConsoleSession(ctx, cs)).To(Succeed())
			return cs.ID
		}
		at := func(age time.Duration) *time.Time { t := now.Add(-age); return &t }
		expiredLong := session(now.Add(-8*day), nil)
		revokedLong := session(now.Add(day), at(8*day))
		expiredRecently := session(now.Add(-6*day), nil)
		revokedRecently := session(now.Add(day), at(6*day))
		live := session(now.Add(day), nil)

		n, err := st.Prune(ctx, store.Retention{}, now, store.PruneLimits{Batch: 1})
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(store.Pruned{ConsoleSessions: 2}))
		Expect(exists("console_sessions", expiredLong)).To(BeFalse())
		Expect(exists("console_sessions", revokedLong)).To(BeFalse())
		for _, kept := range []string{expiredRecently, revokedRecently, live} {
			Expect(exists("console_sessions", kept)).To(BeTrue(), kept)
		}
	})

	It("keeps a kind forever when its retention is zero", func() {
		apiLogs(400 * day)
		old := event(400 * day)
		n, err := st.Prune(ctx, store.Retention{}, now, store.PruneLimits{})
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(Equal(store.Pruned{}))
		Expect(countLogs()).To(BeEquivalentTo(1))
		Expect(exists("events", old)).To(BeTrue())
	})
})
