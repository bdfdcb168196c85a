package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/switchboard/switchboard/store"
)

// The queues lease claimed rows in a column of their own (no index covers it), leaving their due
// times as they were; each spec has a database of its own, since a claim takes every due row.
var _ = Describe("Queues", func() {
	var (
		ctx     = context.Background()
		st      *store.Store
		now     time.Time
		project string
		account string
		number  store.PhoneNumber
		seq     int
	)

	BeforeEach(func() {
		var cleanup func()
		var err error
		st, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cleanup)
		now = time.Now().UTC().Truncate(time.Millisecond)
		p, err := st.CreateProject(ctx, "queues")
		Expect(err).NotTo(HaveOccurred())
		project = p.ID
		a := &store.Account{ProjectID: p.ID, Name: "queues"}
		Expect(st.CreateAccount(ctx, a)).To(Succeed())
		account = a.ID
		number = store.PhoneNumber{ID: store.NewID("pn"), ProjectID: project, AccountID: &account, Number: "+15550100000",
			Type: "local", Country: "US", Carrier: "sim", CreatedAt: now, UpdatedAt: now}
		Expect(st.InsertPhoneNumber(ctx, &number)).To(Succeed())
	})

	// message stores a message of the account's number to a new contact: outbound and queued
	// (and so in the outbound queue), or inbound with the carrier's id.
	message := func(direction, carrierID string) store.Message {
		seq++
		to := fmt.Sprintf("+1555020%04d", seq)
		body := "hello"
		m := store.Message{ID: store.NewID("msg"), ProjectID: project, AccountID: account, PhoneNumberID: number.ID,
			SenderType: "local", Direction: direction, Status: store.StatusQueued, Body: &body, Encoding: "gsm7", Segments: 1,
			Type: "sms", FromNumber: number.Number, ToNumber: to, Carrier: "sim", CreatedAt: now, UpdatedAt: now}
		if direction == store.DirectionInbound {
			m.Status, m.FromNumber, m.ToNumber, m.ReceivedAt = store.StatusReceived, to, number.Number, &now
		}
		if carrierID != "" {
			m.CarrierID = &carrierID
		}
		Expect(st.Tx(ctx, func(tx *store.Store) error {
			pair, err := tx.ResolvePair(ctx, store.Contact{ProjectID: project, AccountID: account, PhoneNumber: to}, number.ID, now, nil)
			if err != nil {
				return err
			}
			m.ContactID, m.ConversationID = pair.Contact.ID, pair.Conversation.ID
			return tx.InsertMessage(ctx, &m, nil)
		})).To(Succeed())
		return m
	}
	// delivery stores an event with a pending delivery to a new endpoint of the project.
	delivery := func() *store.WebhookDelivery {
		e := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: project, URL: "https://hooks.example/d",
			Secret: "whsec_d", Enabled: true, CreatedAt: now, UpdatedAt: now}
		Expect(st.CreateWebhookEndpoint(ctx, e)).To(Succeed())
		var d *store.WebhookDelivery
		Expect(st.Tx(ctx, func(tx *store.Store) error {
			ev, err := store.NewEvent(project, account, "message.sent", map[string]string{"id": "msg_x"})
			if err != nil {
				return err
			}
			d, err = tx.InsertEventFor(ctx, &ev, e.ID)
			return err
		})).To(Succeed())
		return d
	}
	webhookQueue := func() int64 {
		var n int64
		Expect(st.DB().Raw("SELECT COUNT(*) FROM webhook_queue").Scan(&n).Error).To(Succeed())
		return n
	}
	// genericPlan is PostgreSQL's generic plan of a statement (prepared as "(types) AS text") for
	// args, once setup has run, ANALYZE of webhook_queue after it, in a transaction rolled back.
	genericPlan := func(setup []string, prepared, args string) string {
		var plan []string
		err := st.DB().Transaction(func(tx *gorm.DB) error {
			for _, q := range append(setup, "ANALYZE webhook_queue", "SET LOCAL plan_cache_mode = force_generic_plan",
				"PREPARE generic_plan "+prepared) {
				if err := tx.Exec(q).Error; err != nil {
					return err
				}
			}
			defer tx.Exec("DEALLOCATE generic_plan")
			if err := tx.Raw("EXPLAIN EXECUTE generic_plan " + args).Scan(&plan).Error; err != nil {
				return err
			}
			return errors.New("rolled back")
		})
		Expect(err).To(MatchError("rolled back"))
		return strings.Join(plan, "\n")
	}
	// spacedVacuums checks that a queue is vacuumed once the least number of rows (3) have left it
	// (record makes n rows leave), and not again within the least time between VACUUMs (an hour).
	spacedVacuums := func(record func(n int), vacuums func() int64) {
		DeferCleanup(store.SetTidyQueue(3, time.Hour))
		record(3)
		if st.Dialect() != store.Postgres {
			Consistently(vacuums).Within(200 * time.Millisecond).Should(BeZero())
			return
		}
		Eventually(vacuums).Within(10*time.Second).Should(BeEquivalentTo(1), "the first VACUUM waits for no interval")
		record(6)
		Consistently(vacuums).Within(300*time.Millisecond).Should(BeEquivalentTo(1), "6 rows left within the hour")
	}
	criteria := func(at time.Time) store.OutboundCriteria {
		return store.OutboundCriteria{Now: at, Limit: 10, Lease: time.Minute, Unpaced: []string{"local"}, Expiry: 24 * time.Hour}
	}
	dueAt := func(table, key, id string) time.Time {
		var at []time.Time
		col := map[string]string{"outbound_queue": "due_at", "webhook_queue": "due_at", "webhook_deliveries": "next_attempt_at"}[table]
		Expect(st.DB().Raw("SELECT "+col+" FROM "+table+" WHERE "+key+" = ?", id).Scan(&at).Error).To(Succeed())
		Expect(at).To(HaveLen(1))
		return at[0].UTC()
	}

	// claimedOnce has 8 claimers run claim concurrently until each finds nothing, and expects
	// every one of ids claimed by exactly one of them.
	claimedOnce := func(ids map[string]bool, claim func() []string) {
		var mu sync.Mutex
		claimed := map[string]int{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				defer GinkgoRecover()
				for {
					got := claim()
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, id := range got {
						claimed[id]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		Expect(claimed).To(HaveLen(len(ids)))
		for id, n := range claimed {
			Expect(ids).To(HaveKey(id))
			Expect(n).To(Equal(1), "claimed once")
		}
	}

	It("lease the outbound messages they claim until the lease is over, without moving their due time", func() {
		m := message(store.DirectionOutbound, "")
		due := dueAt("outbound_queue", "message_id", m.ID)

		works, err := st.ClaimOutbound(ctx, criteria(now.Add(time.Second)))
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(HaveLen(1))
		Expect(works[0].ID).To(Equal(m.ID))
		Expect(works[0].Claimed).To(BeTrue())
		Expect(works[0].Attempts).To(Equal(1))
		Expect(dueAt("outbound_queue", "message_id", m.ID)).To(BeTemporally("==", due), "the indexed due time is left as it was")

		again, err := st.ClaimOutbound(ctx, criteria(now.Add(30*time.Second)))
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(BeEmpty(), "leased")
		n, err := st.OutboundQueueLength(ctx, new(now.Add(30*time.Second)))
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeZero(), "a leased message is not due")
		next, err := st.NextOutboundDue(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(*next).To(BeTemporally("==", now.Add(time.Second+time.Minute)), "due again at the end of its lease")

		// The dispatcher died: once the lease is over the message is claimed again (the carrier
		// answers a repeated reference with its first submission). The message is `sending` by then.
		Expect(st.DB().Exec("UPDATE messages SET status = ? WHERE id = ?", store.StatusQueued, m.ID).Error).To(Succeed())
		late, err := st.ClaimOutbound(ctx, criteria(now.Add(2*time.Minute)))
		Expect(err).NotTo(HaveOccurred())
		Expect(late).To(HaveLen(1))
		Expect(late[0].Attempts).To(Equal(2))

		// A requeue (a pacing slot, a retry) ends the lease: the message is due at the new time.
		Expect(st.RequeueOutbound(ctx, []string{m.ID}, now.Add(3*time.Minute))).To(Succeed())
		Expect(st.DB().Exec("UPDATE messages SET status = ? WHERE id = ?", store.StatusQueued, m.ID).Error).To(Succeed())
		early, err := st.ClaimOutbound(ctx, criteria(now.Add(3*time.Minute-time.Second)))
		Expect(err).NotTo(HaveOccurred())
		Expect(early).To(BeEmpty())
		requeued, err := st.ClaimOutbound(ctx, criteria(now.Add(3*time.Minute)))
		Expect(err).NotTo(HaveOccurred())
		Expect(requeued).To(HaveLen(1))
		Expect(requeued[0].Attempts).To(Equal(3))

		// Recording it sent takes it out of the queue.
		Expect(st.RecordSent(ctx, []store.Sent{{ID: m.ID, CarrierID: "sim-1"}}, now.Add(3*time.Minute))).To(Succeed())
		next, err = st.NextOutboundDue(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(next).To(BeNil())
	})

	jsonOf := func(v any) []byte {
		b, err := json.Marshal(v)
		Expect(err).NotTo(HaveOccurred())
		return b
	}
	It("return each claimed message as stored, with its contact and number, whatever text its rows share", func() {
		ms := []store.Message{message(store.DirectionOutbound, ""), message(store.DirectionOutbound, ""),
			message(store.DirectionOutbound, ""), message(store.DirectionOutbound, "")}
		// Rows that repeat some text and differ in other: a NULL body, another body and a trace, and
		// a recipient blocked for now (left unclaimed, with its block).
		Expect(st.DB().Exec("UPDATE messages SET body = NULL WHERE id = ?", ms[1].ID).Error).To(Succeed())
		Expect(st.DB().Exec("UPDATE messages SET body = 'other', traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' WHERE id = ?",
			ms[2].ID).Error).To(Succeed())
		block := store.BlockedNumber{AccountID: account, PhoneNumber: ms[3].ToNumber, Reason: "invalid_mobile_number",
			BlockedAt: now, RetryAfter: now.Add(time.Hour)}
		Expect(st.BlockNumber(ctx, block)).To(Succeed())
		at := now.Add(time.Second)
		works, err := st.ClaimOutbound(ctx, criteria(at))
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(HaveLen(len(ms)))
		for i, w := range works {
			Expect(w.ID).To(Equal(ms[i].ID), "in id order")
			v, err := st.GetMessage(ctx, project, w.ID)
			Expect(err).NotTo(HaveOccurred())
			// As JSON: gorm's read and the claim's may put equal times in different *time.Location.
			Expect(json.Marshal(w.Message)).To(MatchJSON(jsonOf(v.Message)))
			Expect(json.Marshal(w.Contact)).To(MatchJSON(jsonOf(v.Contact)))
			Expect(json.Marshal(w.PhoneNumber)).To(MatchJSON(jsonOf(v.PhoneNumber)))
			Expect(w.Attempts).To(Equal(1))
			if i < 3 {
				Expect(w.Claimed).To(BeTrue())
				Expect(w.Status).To(Equal(store.StatusSending))
				Expect(w.Block).To(BeNil())
			} else {
				Expect(w.Claimed).To(BeFalse())
				Expect(w.Status).To(Equal(store.StatusQueued))
				Expect(w.Block).NotTo(BeNil())
				Expect(*w.Block).To(Equal(block))
			}
		}
		Expect(works[0].Body).NotTo(BeNil())
		Expect(*works[0].Body).To(Equal("hello"))
		Expect(works[1].Body).To(BeNil())
		Expect(*works[2].Body).To(Equal("other"))
		Expect(works[2].Traceparent).NotTo(BeNil())
		Expect(works[3].Traceparent).To(BeNil())
	})

	It("give each due outbound message to one of several concurrent claims", func() {
		ids := map[string]bool{}
		for range 200 {
			ids[message(store.DirectionOutbound, "").ID] = true
		}
		claimedOnce(ids, func() []string {
			c := criteria(now.Add(time.Second))
			c.Limit = 5
			works, err := st.ClaimOutbound(ctx, c)
			Expect(err).NotTo(HaveOccurred())
			var got []string
			for _, w := range works {
				Expect(w.Claimed).To(BeTrue())
				got = append(got, w.ID)
			}
			return got
		})
	})

	It("take recorded messages out of the outbound queue by where their claim left their rows, and leave a row that moved since to its next claim", func() {
		a, b := message(store.DirectionOutbound, ""), message(store.DirectionOutbound, "")
		works, err := st.ClaimOutbound(ctx, criteria(now.Add(time.Second)))
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(HaveLen(2))
		sent := make([]store.Sent, len(works))
		for i, w := range works {
			sent[i] = store.Sent{ID: w.ID, CarrierID: "sim-" + w.ID, QueueRow: w.QueueRow}
		}
		// b's row moves (a retry requeues it, and a later claim leases it again): its claim's place
		// is stale, and b's row stays for that claim, which finds the message sent and drops it.
		Expect(st.RequeueOutbound(ctx, []string{b.ID}, now.Add(time.Second))).To(Succeed())
		Expect(st.RecordSent(ctx, sent, now.Add(2*time.Second))).To(Succeed())
		for _, id := range []string{a.ID, b.ID} {
			got, err := st.GetMessage(ctx, project, id)
			Expect(err).NotTo(HaveOccurred())
			Expect(got.Status).To(Equal(store.StatusSent))
			Expect(*got.CarrierID).To(Equal("sim-" + id))
		}
		var left []string
		Expect(st.DB().Raw("SELECT message_id FROM outbound_queue").Scan(&left).Error).To(Succeed())
		if st.Dialect() == store.Postgres {
			Expect(left).To(ConsistOf(b.ID))
			again, err := st.ClaimOutbound(ctx, criteria(now.Add(3*time.Second)))
			Expect(err).NotTo(HaveOccurred())
			Expect(again).To(HaveLen(1))
			Expect(again[0].Claimed).To(BeFalse())
			Expect(again[0].Status).To(Equal(store.StatusSent))
			Expect(st.DropOutbound(ctx, []string{b.ID})).To(Succeed())
		} else {
			Expect(left).To(BeEmpty(), "SQLite takes them out by message id")
		}

		// A record without the claim's places takes the rows out by message id.
		c := message(store.DirectionOutbound, "")
		works, err = st.ClaimOutbound(ctx, criteria(now.Add(4*time.Second)))
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(HaveLen(1))
		Expect(st.RecordSent(ctx, []store.Sent{{ID: c.ID, CarrierID: "sim-c"}}, now.Add(5*time.Second))).To(Succeed())
		n, err := st.OutboundQueueLength(ctx, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeZero())
	})

	It("are claimed and recorded by a dispatch loop on a connection of its own (PostgreSQL), given back after a failed statement", func() {
		if st.Dialect() != store.Postgres {
			pinned, release := st.Pinned()
			defer release()
			Expect(pinned).To(BeIdenticalTo(st), "SQLite has nothing to pin")
			return
		}
		pinned, release := st.Pinned()
		pid, err := pinned.BackendPID(ctx)
		Expect(err).NotTo(HaveOccurred())
		// Other connections of the pool are busy meanwhile: the pinned store's stay its own.
		held, err := st.DB().DB()
		Expect(err).NotTo(HaveOccurred())
		busy, err := held.Conn(ctx)
		Expect(err).NotTo(HaveOccurred())
		defer busy.Close()
		m := message(store.DirectionOutbound, "")
		works, err := pinned.ClaimOutbound(ctx, criteria(now.Add(time.Second)))
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(HaveLen(1))
		Expect(pinned.BackendPID(ctx)).To(Equal(pid))
		Expect(pinned.RecordSent(ctx, []store.Sent{{ID: m.ID, CarrierID: "sim-p", QueueRow: works[0].QueueRow}}, now.Add(2*time.Second))).To(Succeed())
		Expect(pinned.BackendPID(ctx)).To(Equal(pid))

		// After a failed statement the connection goes back to the pool (which closes a broken
		// one) and the next statement takes one again.
		Expect(pinned.FailPinned(ctx)).NotTo(Succeed())
		_, err = pinned.BackendPID(ctx)
		Expect(err).NotTo(HaveOccurred())
		release()
		n, err := st.OutboundQueueLength(ctx, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeZero())
	})

	It("vacuum the outbound queue on PostgreSQL once enough rows have left it, so that claims do not walk past deleted rows", func() {
		DeferCleanup(store.SetTidyQueueEvery(3))
		var sent []store.Sent
		for range 4 {
			sent = append(sent, store.Sent{ID: message(store.DirectionOutbound, "").ID})
		}
		Expect(st.RecordSent(ctx, sent[:2], now)).To(Succeed())
		Expect(st.OutboundVacuums()).To(BeZero(), "2 rows left, fewer than 3")
		Expect(st.RecordSent(ctx, sent[2:], now)).To(Succeed())
		if st.Dialect() != store.Postgres {
			Consistently(st.OutboundVacuums).Within(200 * time.Millisecond).Should(BeZero())
			return
		}
		Eventually(st.OutboundVacuums).Within(10 * time.Second).Should(BeEquivalentTo(1))
		var dead []int64
		Eventually(func() []int64 {
			Expect(st.DB().Raw(`SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'outbound_queue'`).Scan(&dead).Error).To(Succeed())
			return dead
		}).Within(10 * time.Second).Should(Equal([]int64{0}))
		n, err := st.OutboundQueueLength(ctx, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeZero())
	})

	It("vacuum the outbound queue on PostgreSQL no more often than the least time between VACUUMs, however many rows left it", func() {
		// Every VACUUM makes PostgreSQL plan again the statements that read or write the queue.
		record := func(n int) {
			var sent []store.Sent
			for range n {
				sent = append(sent, store.Sent{ID: message(store.DirectionOutbound, "").ID})
			}
			Expect(st.RecordSent(ctx, sent, now)).To(Succeed())
		}
		spacedVacuums(record, st.OutboundVacuums)
	})

	It("lease the webhook deliveries they claim until the lease is over or an outcome is recorded", func() {
		d := delivery()
		due := dueAt("webhook_queue", "delivery_id", d.ID)
		Expect(dueAt("webhook_deliveries", "id", d.ID)).To(BeTemporally("==", due))

		claim := func(at time.Time) []store.DeliveryWork {
			works, err := st.ClaimDeliveries(ctx, at, 10, time.Minute)
			Expect(err).NotTo(HaveOccurred())
			return works
		}
		first := claim(due.Add(time.Second))
		Expect(first).To(HaveLen(1))
		Expect(first[0].Delivery.ID).To(Equal(d.ID))
		Expect(first[0].Endpoint.ID).To(Equal(d.EndpointID))
		Expect(dueAt("webhook_queue", "delivery_id", d.ID)).To(BeTemporally("==", due), "the indexed due time is left as it was")
		Expect(claim(due.Add(30*time.Second))).To(BeEmpty(), "leased")
		next, err := st.NextDeliveryDue(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(*next).To(BeTemporally("==", due.Add(time.Second+time.Minute)))

		// The deliverer died: once the lease is over the delivery is claimed again.
		Expect(claim(due.Add(2 * time.Minute))).To(HaveLen(1))

		// A failed attempt with a retry ends the lease: the delivery is due at the retry.
		retry, msg := due.Add(10*time.Minute), "HTTP 500"
		Expect(st.RecordDeliveries(ctx, []store.DeliveryOutcome{{ID: d.ID, Attempts: 1, Status: 500, Error: &msg,
			State: store.DeliveryPending, NextAttemptAt: &retry}}, due.Add(2*time.Minute))).To(Succeed())
		Expect(claim(retry.Add(-time.Second))).To(BeEmpty())
		Expect(dueAt("webhook_deliveries", "id", d.ID)).To(BeTemporally("==", retry), "the API shows the retry's time")
		retried := claim(retry)
		Expect(retried).To(HaveLen(1))
		Expect(retried[0].Delivery.Attempts).To(Equal(1))

		// A deferral ends it too.
		Expect(st.DeferDeliveries(ctx, []string{d.ID}, retry.Add(time.Second))).To(Succeed())
		Expect(dueAt("webhook_deliveries", "id", d.ID)).To(BeTemporally("==", retry.Add(time.Second)))
		Expect(claim(retry.Add(time.Second))).To(HaveLen(1))

		Expect(st.RecordDeliveries(ctx, []store.DeliveryOutcome{{ID: d.ID, Attempts: 2, Status: 204,
			State: store.DeliverySucceeded}}, retry.Add(2*time.Second))).To(Succeed())
		got, err := st.GetWebhookDelivery(ctx, d.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Status).To(Equal(store.DeliverySucceeded))
		Expect(got.Attempts).To(Equal(2))
		Expect(claim(retry.Add(time.Hour))).To(BeEmpty())
		next, err = st.NextDeliveryDue(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(next).To(BeNil())
		Expect(webhookQueue()).To(BeZero(), "a delivery that ended left the queue")

		// A deliverer whose lease ran out records its outcome after another's: the delivery keeps
		// the first, and is not in the queue again.
		Expect(st.RecordDeliveries(ctx, []store.DeliveryOutcome{{ID: d.ID, Attempts: 3, Status: 500, Error: &msg,
			State: store.DeliveryPending, NextAttemptAt: &retry}}, retry.Add(3*time.Second))).To(Succeed())
		got, err = st.GetWebhookDelivery(ctx, d.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Status).To(Equal(store.DeliverySucceeded))
		Expect(got.Attempts).To(Equal(2))
		Expect(webhookQueue()).To(BeZero())
	})

	It("claim webhook deliveries with each one's own endpoint and event, the same endpoint's in a row or not", func() {
		endpoint := func(url string) *store.WebhookEndpoint {
			e := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: project, URL: url,
				Secret: "whsec_" + url, Enabled: true, CreatedAt: now, UpdatedAt: now}
			Expect(st.CreateWebhookEndpoint(ctx, e)).To(Succeed())
			return e
		}
		a, b := endpoint("https://a.example/in"), endpoint("https://b.example/in")
		other := store.NewID(store.PrefixAccount)
		var ds []*store.WebhookDelivery
		for _, x := range []struct {
			e            *store.WebhookEndpoint
			account, typ string
		}{{a, account, "message.sent"}, {a, account, "message.sent"}, {a, other, "message.delivered"}, {b, other, "message.delivered"},
			{a, other, "message.sent"}, {b, account, "message.sent"}} {
			Expect(st.Tx(ctx, func(tx *store.Store) error {
				ev, err := store.NewEvent(project, x.account, x.typ, map[string]string{"id": store.NewID(store.PrefixMessage)})
				if err != nil {
					return err
				}
				d, err := tx.InsertEventFor(ctx, &ev, x.e.ID)
				ds = append(ds, d)
				return err
			})).To(Succeed())
		}
		works, err := st.ClaimDeliveries(ctx, now.Add(time.Second), 10, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(HaveLen(len(ds)))
		for i, w := range works {
			Expect(w.Delivery.ID).To(Equal(ds[i].ID))
			Expect(w.Endpoint.ID).To(Equal(ds[i].EndpointID))
			e := a
			if w.Endpoint.ID == b.ID {
				e = b
			}
			Expect(w.Endpoint.URL).To(Equal(e.URL))
			Expect(w.Endpoint.Secret).To(Equal(e.Secret))
			ev, err := st.GetEvent(ctx, ds[i].EventID)
			Expect(err).NotTo(HaveOccurred())
			Expect(w.Event.ID).To(Equal(ev.ID))
			Expect(w.Event.AccountID).To(Equal(ev.AccountID))
			Expect(w.Event.Type).To(Equal(ev.Type))
			Expect(w.Event.Data).To(Equal(ev.Data))
			Expect(w.Delivery.EventType).To(Equal(ev.Type))
		}
	})

	It("give each due webhook delivery to one of several concurrent claims", func() {
		ids := map[string]bool{}
		for range 200 {
			ids[delivery().ID] = true
		}
		claimedOnce(ids, func() []string {
			works, err := st.ClaimDeliveries(ctx, now.Add(time.Second), 5, time.Minute)
			Expect(err).NotTo(HaveOccurred())
			var got []string
			for _, w := range works {
				got = append(got, w.Delivery.ID)
			}
			return got
		})
	})

	It("lease the webhook deliveries they claim by their rows' ctids in the claim's generic plan (PostgreSQL)", func() {
		if st.Dialect() != store.Postgres {
			Skip("PostgreSQL's plan")
		}
		// The claim runs its generic plan from its sixth execution on; here over a queue of 1,000
		// due rows, where an index scan of the due rows would read them all.
		plan := genericPlan([]string{`INSERT INTO webhook_queue (delivery_id, due_at, endpoint_id, event_id)
				SELECT 'whd_' || i, now() - interval '1 hour' + i * interval '1 ms', 'we_x', 'evt_' || i FROM generate_series(1, 1000) i`},
			"(timestamptz, int, timestamptz) AS "+store.ClaimDeliveriesPG, "(now(), 40, now() + interval '1 minute')")
		Expect(plan).To(MatchRegexp(`Tid Scan on webhook_queue w\b`))
	})

	It("record webhook outcomes and claim due deliveries in one call", func() {
		d1, d2 := delivery(), delivery()
		at := now.Add(time.Second)
		Expect(st.ClaimDeliveries(ctx, at, 10, time.Minute)).To(HaveLen(2))
		d3 := delivery()
		retry, msg := at, "HTTP 500"
		works, err := st.RecordAndClaimDeliveries(ctx, []store.DeliveryOutcome{
			{ID: d1.ID, Attempts: 1, Status: 204, State: store.DeliverySucceeded},
			{ID: d2.ID, Attempts: 1, Status: 500, Error: &msg, State: store.DeliveryPending, NextAttemptAt: &retry},
		}, at.Add(time.Second), 10, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(HaveLen(1), "the retry was leased when the call began")
		Expect(works[0].Delivery.ID).To(Equal(d3.ID))
		Expect(works[0].Event.ID).To(Equal(d3.EventID))
		got, err := st.GetWebhookDelivery(ctx, d1.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Status).To(Equal(store.DeliverySucceeded))
		Expect(got.LastStatus).To(HaveValue(Equal(204)))
		Expect(got.DeliveredAt).NotTo(BeNil())
		got, err = st.GetWebhookDelivery(ctx, d2.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Status).To(Equal(store.DeliveryPending))
		Expect(got.Attempts).To(Equal(1))
		Expect(got.LastError).To(HaveValue(Equal(msg)))
		Expect(webhookQueue()).To(BeEquivalentTo(2), "d1 left the queue")

		works, err = st.RecordAndClaimDeliveries(ctx, []store.DeliveryOutcome{
			{ID: d3.ID, Attempts: 1, Status: 200, State: store.DeliverySucceeded}}, at.Add(2*time.Second), 10, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(HaveLen(1))
		Expect(works[0].Delivery.ID).To(Equal(d2.ID))
		Expect(works[0].Delivery.Attempts).To(Equal(1))
		Expect(webhookQueue()).To(BeEquivalentTo(1))

		// No room: the outcomes only.
		works, err = st.RecordAndClaimDeliveries(ctx, []store.DeliveryOutcome{
			{ID: d2.ID, Attempts: 2, Status: 200, State: store.DeliverySucceeded}}, at.Add(3*time.Second), 0, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(BeEmpty())
		Expect(webhookQueue()).To(BeZero())
	})

	It("date a success's delivery when its endpoint answered, not when the success was recorded", func() {
		d1, d2 := delivery(), delivery()
		answered, recorded := now.Add(time.Second), now.Add(2*time.Second)
		for _, record := range []func([]store.DeliveryOutcome) error{
			func(outs []store.DeliveryOutcome) error { return st.RecordDeliveries(ctx, outs, recorded) },
			func(outs []store.DeliveryOutcome) error {
				_, err := st.RecordAndClaimDeliveries(ctx, outs, recorded, 0, time.Minute)
				return err
			},
		} {
			Expect(record([]store.DeliveryOutcome{
				{ID: d1.ID, Attempts: 1, Status: 204, State: store.DeliverySucceeded, AnsweredAt: answered},
				{ID: d2.ID, Attempts: 1, Status: 204, State: store.DeliverySucceeded}})).To(Succeed())
			got, err := st.GetWebhookDelivery(ctx, d1.ID)
			Expect(err).NotTo(HaveOccurred())
			Expect(got.DeliveredAt).To(HaveValue(BeTemporally("==", answered)))
			got, err = st.GetWebhookDelivery(ctx, d2.ID)
			Expect(err).NotTo(HaveOccurred())
			Expect(got.DeliveredAt).To(HaveValue(BeTemporally("==", recorded)), "no answer's time: the record's")
			d1, d2 = delivery(), delivery()
		}
	})

	It("take a delivery out of the webhook queue when its outcome ends it, even one recorded second", func() {
		d1, d2 := delivery(), delivery()
		Expect(webhookQueue()).To(BeEquivalentTo(2))
		Expect(st.ClaimDeliveries(ctx, now.Add(time.Second), 10, time.Minute)).To(HaveLen(2))
		// Something ended the first delivery without its deliverer (an operator's update).
		Expect(st.UpdateWebhookDelivery(ctx, d1.ID, map[string]any{"status": store.DeliveryFailed})).To(Succeed())
		Expect(webhookQueue()).To(BeEquivalentTo(1))
		// Its deliverer's late outcome is dropped, and so is the queue row of the second.
		Expect(st.RecordDeliveries(ctx, []store.DeliveryOutcome{{ID: d1.ID, Attempts: 1, Status: 204, State: store.DeliverySucceeded},
			{ID: d2.ID, Attempts: 1, Status: 204, State: store.DeliverySucceeded}}, now.Add(2*time.Second))).To(Succeed())
		got, err := st.GetWebhookDelivery(ctx, d1.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Status).To(Equal(store.DeliveryFailed))
		got, err = st.GetWebhookDelivery(ctx, d2.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Status).To(Equal(store.DeliverySucceeded))
		Expect(got.DeliveredAt).NotTo(BeNil())
		Expect(webhookQueue()).To(BeZero())
	})

	It("record webhook outcomes by the queue rows' places their claims returned, and leave a row claimed again to its new claim", func() {
		d1, d2, d3 := delivery(), delivery(), delivery()
		at := now.Add(time.Second)
		works, err := st.ClaimDeliveries(ctx, at, 10, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(HaveLen(3))
		byID := map[string]store.DeliveryWork{}
		for _, w := range works {
			byID[w.Delivery.ID] = w
		}
		// d3's deliverer stalls: its lease runs out and another claim takes the delivery.
		again, err := st.ClaimDeliveries(ctx, at.Add(2*time.Minute), 10, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(HaveLen(3))
		for _, w := range again {
			byID[w.Delivery.ID+"/again"] = w
		}
		retry, msg := at.Add(time.Hour), "HTTP 500"
		Expect(st.RecordDeliveries(ctx, []store.DeliveryOutcome{
			{ID: d1.ID, Attempts: 1, Status: 204, State: store.DeliverySucceeded, QueueRow: byID[d1.ID+"/again"].QueueRow},
			{ID: d2.ID, Attempts: 1, Status: 500, Error: &msg, State: store.DeliveryPending, NextAttemptAt: &retry,
				QueueRow: byID[d2.ID+"/again"].QueueRow},
			// The stalled deliverer's outcome, with the place of the row as its own claim left it.
			{ID: d3.ID, Attempts: 1, Status: 204, State: store.DeliverySucceeded, QueueRow: byID[d3.ID].QueueRow},
		}, at.Add(2*time.Minute))).To(Succeed())
		got, err := st.GetWebhookDelivery(ctx, d3.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Status).To(Equal(store.DeliverySucceeded), "the first outcome recorded")
		if st.Dialect() == store.Postgres {
			Expect(webhookQueue()).To(BeEquivalentTo(2), "d1 left the queue; d3's row, claimed again, stays with its new claim")
		} else {
			Expect(webhookQueue()).To(BeEquivalentTo(1), "SQLite finds the rows by delivery id")
		}
		Expect(dueAt("webhook_queue", "delivery_id", d2.ID)).To(BeTemporally("==", retry), "the retry is due at its next attempt")
		Expect(st.ClaimDeliveries(ctx, at.Add(2*time.Minute+30*time.Second), 10, time.Minute)).To(BeEmpty(),
			"d3's row is leased by its new claim, d2's due at its retry")

		// The new claim's outcome ends d3's row, though the delivery had ended already.
		Expect(st.RecordDeliveries(ctx, []store.DeliveryOutcome{{ID: d3.ID, Attempts: 1, Status: 204, State: store.DeliverySucceeded,
			QueueRow: byID[d3.ID+"/again"].QueueRow}}, at.Add(3*time.Minute))).To(Succeed())
		Expect(webhookQueue()).To(BeEquivalentTo(1))
		retried, err := st.ClaimDeliveries(ctx, retry, 10, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(retried).To(HaveLen(1))
		Expect(retried[0].Delivery.ID).To(Equal(d2.ID))
	})

	It("record webhook outcomes by the queue rows' ctids in the record's generic plan, on a small queue too (PostgreSQL)", func() {
		if st.Dialect() != store.Postgres {
			Skip("PostgreSQL's plan")
		}
		// The statement runs its generic plan from its sixth execution on. The queue had 2,000 rows
		// (the first VACUUM comes once that many have left), of which 50 are left; a join to the
		// outcomes by delivery id was planned over such a queue as a hash join over a scan of the
		// whole table, which grows until the next VACUUM.
		text := genericPlan([]string{`INSERT INTO webhook_queue (delivery_id, due_at, endpoint_id, event_id)
				SELECT 'whd_' || lpad(i::text, 26, '0'), now() + i * interval '1 ms', 'we_' || lpad('', 26, 'x'), 'evt_' || lpad(i::text, 26, '0')
				FROM generate_series(1, 2000) i`,
			`DELETE FROM webhook_queue WHERE delivery_id <= 'whd_' || lpad('1950', 26, '0')`},
			"(text[], text[], int[], int[], text[], timestamptz[], timestamptz, tid[], timestamptz[]) AS "+store.RecordLocatedPG,
			`('{a,b}', '{succeeded,pending}', '{1,1}', '{204,500}', '{NULL,x}', '{NULL,NULL}', now(), '{"(0,1)","(0,2)"}', ARRAY[now(), now()])`)
		Expect(text).To(MatchRegexp(`(?s)Delete on webhook_queue w_1\b.*Tid Scan on webhook_queue w_1\b`))
		Expect(text).To(MatchRegexp(`(?s)Tid Scan on webhook_queue w_1\b.*Filter: \(\(hashed SubPlan \d+\) IS TRUE\)`),
			"each row's delivery is looked up in a hash of the outcomes' ids")
		Expect(text).NotTo(MatchRegexp(`Seq Scan on webhook_queue`))
	})

	It("vacuum the webhook queue on PostgreSQL once enough rows have left it", func() {
		DeferCleanup(store.SetTidyQueueEvery(3))
		var outs []store.DeliveryOutcome
		for range 4 {
			outs = append(outs, store.DeliveryOutcome{ID: delivery().ID, Attempts: 1, Status: 200, State: store.DeliverySucceeded})
		}
		Expect(st.RecordDeliveries(ctx, outs[:2], now)).To(Succeed())
		Expect(st.WebhookVacuums()).To(BeZero(), "2 rows left, fewer than 3")
		Expect(st.RecordDeliveries(ctx, outs[2:], now)).To(Succeed())
		Expect(webhookQueue()).To(BeZero())
		if st.Dialect() != store.Postgres {
			Consistently(st.WebhookVacuums).Within(200 * time.Millisecond).Should(BeZero())
			return
		}
		Eventually(st.WebhookVacuums).Within(10 * time.Second).Should(BeEquivalentTo(1))
		// (The count of dead rows is not checked: the deleting backend may report its deletes
		// after the VACUUM reported none left.)
		var vacuums []int64
		Eventually(func() []int64 {
			Expect(st.DB().Raw(`SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'webhook_queue'`).Scan(&vacuums).Error).To(Succeed())
			return vacuums
		}).Within(10 * time.Second).Should(Equal([]int64{1}))
	})

	It("vacuum the webhook queue on PostgreSQL no more often than the least time between VACUUMs, however many rows left it", func() {
		record := func(n int) {
			var outs []store.DeliveryOutcome
			for range n {
				outs = append(outs, store.DeliveryOutcome{ID: delivery().ID, Attempts: 1, Status: 200, State: store.DeliverySucceeded})
			}
			Expect(st.RecordDeliveries(ctx, outs, now)).To(Succeed())
		}
		spacedVacuums(record, st.WebhookVacuums)
	})

	It("are never truncated by a VACUUM on PostgreSQL, whose lock would hold back every claim", func() {
		if st.Dialect() != store.Postgres {
			Skip("SQLite has no VACUUM of a table")
		}
		for _, table := range []string{"outbound_queue", "webhook_queue"} {
			var opts []string
			Expect(st.DB().Raw(`SELECT unnest(reloptions) FROM pg_class WHERE relname = ?`, table).Scan(&opts).Error).To(Succeed())
			Expect(opts).To(ContainElement("vacuum_truncate=false"), table)
		}
	})

	It("keep an inbound message unique by its carrier's id, which an outbound message may share", func() {
		in := message(store.DirectionInbound, "carrier-42")
		out := message(store.DirectionOutbound, "")
		works, err := st.ClaimOutbound(ctx, criteria(now.Add(time.Second)))
		Expect(err).NotTo(HaveOccurred())
		Expect(works).To(HaveLen(1))
		var found *store.Message
		Expect(st.RecordSent(ctx, []store.Sent{{ID: out.ID, CarrierID: "carrier-42"}}, now)).To(Succeed())
		var sent []store.Message
		Expect(st.DB().Where("id = ?", out.ID).Find(&sent).Error).To(Succeed())
		Expect(sent).To(HaveLen(1))
		Expect(sent[0].CarrierID).To(HaveValue(Equal("carrier-42")))

		found, err = st.InboundMessageByCarrierID(ctx, "sim", "carrier-42")
		Expect(err).NotTo(HaveOccurred())
		Expect(found.ID).To(Equal(in.ID))
		seen, err := st.InboundSeen(ctx, "sim", "carrier-42")
		Expect(err).NotTo(HaveOccurred())
		Expect(seen).To(BeTrue())
		seen, err = st.InboundSeen(ctx, "sim", "carrier-43")
		Expect(err).NotTo(HaveOccurred())
		Expect(seen).To(BeFalse())
		_, err = st.InboundMessageByCarrierID(ctx, "other", "carrier-42")
		Expect(err).To(MatchError(store.ErrNotFound))

		// The same inbound message again is a duplicate; from another carrier it is not.
		dup := in
		dup.ID = store.NewID("msg")
		err = st.Tx(ctx, func(tx *store.Store) error { return tx.InsertMessage(ctx, &dup, nil) })
		Expect(err).To(MatchError(store.ErrDuplicate))
		dup.ID, dup.Carrier = store.NewID("msg"), "other"
		Expect(st.Tx(ctx, func(tx *store.Store) error { return tx.InsertMessage(ctx, &dup, nil) })).To(Succeed())
	})

	It("key an inbound message by its carrier's id and an outbound one by none, once it is sent too", func() {
		in := message(store.DirectionInbound, "carrier-44")
		out := message(store.DirectionOutbound, "")
		_, err := st.ClaimOutbound(ctx, criteria(now.Add(time.Second)))
		Expect(err).NotTo(HaveOccurred())
		Expect(st.RecordSent(ctx, []store.Sent{{ID: out.ID, CarrierID: "carrier-45"}}, now)).To(Succeed())
		// keyOf is a message's inbound_carrier_id, "-" for NULL.
		keyOf := func(id string) string {
			var key []string
			Expect(st.DB().Raw("SELECT COALESCE(inbound_carrier_id, '-') FROM messages WHERE id = ?", id).Scan(&key).Error).To(Succeed())
			Expect(key).To(HaveLen(1))
			return key[0]
		}
		Expect(keyOf(in.ID)).To(Equal("carrier-44"))
		Expect(keyOf(out.ID)).To(Equal("-"))
		if st.Dialect() == store.Postgres {
			// A trigger writes the key as an inbound message is inserted (migration 0035); an update
			// that would leave it stale is refused.
			err := st.DB().Exec("UPDATE messages SET carrier_id = 'carrier-46' WHERE id = ?", in.ID).Error
			Expect(err).To(MatchError(ContainSubstring("messages_inbound_carrier_id")))
			Expect(keyOf(in.ID)).To(Equal("carrier-44"))
		}
	})
})
