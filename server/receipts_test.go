package server_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// eagerCarrier is a carrier whose delivery receipt overtakes the record of the submission: Submit
// reports the delivery itself before it returns, so the core learns of the delivery while the
// message is still `sending`. With Async, every other message's receipt comes from a goroutine
// instead, racing the record of the submission.
type eagerCarrier struct {
	reporter carriers.Reporter
	async    atomic.Bool
	n        atomic.Int64
	pending  sync.WaitGroup
}

func (c *eagerCarrier) Name() string { return "eager" }

func (c *eagerCarrier) Submit(ctx context.Context, m carriers.Outbound) (carriers.Submission, error) {
	async := c.async.Load() && c.n.Add(1)%2 == 0
	report := func(ctx context.Context) error {
		return c.reporter.Report(ctx, carriers.Report{Carrier: c.Name(), Receipt: &carriers.Receipt{
			Reference: m.Reference, CarrierID: "eager-" + m.Reference, Status: carriers.ReceiptDelivered, At: time.Now()}})
	}
	if async {
		c.pending.Add(1)
		go func() {
			defer c.pending.Done()
			defer GinkgoRecover()
			Expect(report(context.WithoutCancel(ctx))).To(Succeed())
		}()
	} else if err := report(ctx); err != nil {
		return carriers.Submission{}, err
	}
	return carriers.Submission{CarrierID: "eager-" + m.Reference}, nil
}

// A receipt that arrives before the dispatch has recorded the submission (issue 16, item 18):
// the message still goes sending → sent → delivered, with both events in that order.
var _ = Describe("A receipt that overtakes the record of its submission", Ordered, func() {
	var (
		eager *eagerCarrier
		t     *tenant
		acct  string
		ost   *store.Store
	)

	BeforeAll(func(ctx context.Context) {
		// Its own database and core: the suite's workers would dispatch these messages through
		// the simulated carrier.
		var cleanup func()
		var err error
		ost, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cleanup)
		eager = &eagerCarrier{}
		c, err := service.NewCore(service.CoreConfig{Store: ost, PublicURL: "https://switchboard.test", Logger: testLogger(),
			Pacing: service.Pacing{Local: -1},
			Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
				eager.reporter = r
				return []carriers.Carrier{eager}, nil
			}})
		Expect(err).NotTo(HaveOccurred())
		workers, err := c.StartWorkers(context.WithoutCancel(ctx))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) { Expect(workers.Stop(ctx)).To(Succeed()) })

		p, err := ost.CreateProject(ctx, "eager")
		Expect(err).NotTo(HaveOccurred())
		k, secret, err := ost.CreateAPIKey(ctx, p.ID, false)
		Expect(err).NotTo(HaveOccurred())
		t = &tenant{ProjectID: p.ID, KeyID: k.ID, Key: secret, api: newAPI(server.Config{Core: c, RateLimit: -1})}
		acct = t.createAccount("Eager")
		now := time.Now().UTC()
		cid := store.NewID(store.PrefixCampaign)
		Expect(ost.DB().Exec(`INSERT INTO campaigns (id, project_id, account_id, carrier, status, params, created_at, updated_at)
			VALUES (?, ?, ?, 'eager', 'active', '{}', ?, ?)`, cid, p.ID, acct, now, now).Error).To(Succeed())
		Expect(ost.DB().Exec(`INSERT INTO phone_numbers (id, project_id, account_id, number, type, country, metadata, carrier,
			campaign_id, attachment_status, created_at, updated_at) VALUES (?, ?, ?, ?, 'local', 'US', '{}', 'eager', ?, 'attached', ?, ?)`,
			store.NewID(store.PrefixPhoneNumber), p.ID, acct, newNumber(), cid, now, now).Error).To(Succeed())
	})

	// steps returns, for each message id, its message.sent and message.delivered events in id
	// order (which is the order they were recorded in): each one's data with its type and id.
	steps := func() map[string][]map[string]any {
		var evs []store.Event
		Expect(ost.DB().Where("project_id = ? AND type IN ?", t.ProjectID, []string{webhooks.EventMessageSent, webhooks.EventMessageDelivered}).
			Order("id").Find(&evs).Error).To(Succeed())
		out := map[string][]map[string]any{}
		for _, e := range evs {
			d := (&response{Body: []byte(e.Data)}).JSON()
			d["event_type"], d["event_id"] = e.Type, e.ID
			id := d["id"].(string)
			out[id] = append(out[id], d)
		}
		return out
	}

	// expectSentThenDelivered checks one message's events: exactly one message.sent, then exactly
	// one message.delivered, with sent_at no later than delivered_at.
	expectSentThenDelivered := func(id string, evs []map[string]any) {
		GinkgoHelper()
		Expect(evs).To(HaveLen(2), "message %s: %v", id, evs)
		sent, delivered := evs[0], evs[1]
		Expect(sent).To(SatisfyAll(HaveKeyWithValue("event_type", "message.sent"), HaveKeyWithValue("status", "sent"),
			HaveKey("sent_at"), Not(HaveKey("delivered_at"))), "message %s", id)
		Expect(delivered).To(SatisfyAll(HaveKeyWithValue("event_type", "message.delivered"), HaveKeyWithValue("status", "delivered"),
			HaveKey("sent_at"), HaveKey("delivered_at")), "message %s", id)
		Expect(sent["event_id"].(string) < delivered["event_id"].(string)).To(BeTrue(), "message.sent is recorded first")
		sentAt, err := time.Parse(time.RFC3339Nano, sent["sent_at"].(string))
		Expect(err).NotTo(HaveOccurred())
		deliveredAt, err := time.Parse(time.RFC3339Nano, delivered["delivered_at"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(sentAt).NotTo(BeTemporally(">", deliveredAt))
		Expect(delivered["sent_at"]).To(Equal(sent["sent_at"]))
	}

	It("announces message.sent, then message.delivered, with sent_at no later than delivered_at", func() {
		id := t.send(acct, map[string]any{"to": newHandset(), "body": "receipt first"})["id"].(string)
		msg := t.awaitStatus(id, "delivered")
		Expect(msg).To(SatisfyAll(HaveKey("sent_at"), HaveKey("delivered_at")))
		Eventually(func() []map[string]any { return steps()[id] }).Should(HaveLen(2))
		expectSentThenDelivered(id, steps()[id])
	})

	It("announces every message of a load sent once before its delivery, whichever comes first", func() {
		const total = 300
		eager.async.Store(true)
		DeferCleanup(func() { eager.async.Store(false) })
		ids := make([]string, total)
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				defer GinkgoRecover()
				for i := w; i < total; i += 8 {
					r := t.post("/accounts/"+acct+"/messages", map[string]any{"to": newHandset(), "body": fmt.Sprintf("load %d", i)})
					Expect(r).To(HaveStatus(http.StatusCreated), r.String())
					ids[i] = r.JSON()["id"].(string)
				}
			})
		}
		wg.Wait()
		Eventually(func() int64 {
			var n int64
			Expect(ost.DB().Raw(`SELECT COUNT(*) FROM messages WHERE id IN ? AND status = 'delivered'`, ids).Scan(&n).Error).To(Succeed())
			return n
		}).WithTimeout(60 * time.Second).WithPolling(100 * time.Millisecond).Should(BeEquivalentTo(total))
		eager.pending.Wait()
		all := steps()
		for _, id := range ids {
			expectSentThenDelivered(id, all[id])
		}
	})
})
