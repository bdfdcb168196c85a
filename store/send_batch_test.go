package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/switchboard/switchboard/store"
)

var batchHandsets atomic.Int64

// The group commit of sends (service/send_batch.go): one read of several sends' contexts, one
// write of several sends, each send with its own outcome.
var _ = Describe("Batched sends", func() {
	var (
		project, account string
		number           *store.PhoneNumber
		now              time.Time
	)
	handset := func() string { return fmt.Sprintf("+1647%07d", batchHandsets.Add(1)) }
	BeforeEach(func(ctx context.Context) {
		p, err := st.CreateProject(ctx, "batched sends")
		Expect(err).NotTo(HaveOccurred())
		project = p.ID
		a := &store.Account{ProjectID: project, Name: "batched"}
		Expect(st.CreateAccount(ctx, a)).To(Succeed())
		account = a.ID
		number = &store.PhoneNumber{ProjectID: project, AccountID: &account, Number: fmt.Sprintf("+1998%07d", batchHandsets.Add(1)),
			Type: store.NumberTollFree, Country: "US", Carrier: "sim"}
		Expect(st.InsertPhoneNumber(ctx, number)).To(Succeed())
		now = time.Now().UTC().Truncate(time.Microsecond)
	})

	// message is a queued outbound message of the account to a recipient, from the number.
	message := func(to, conversationID, contactID string) *store.Message {
		body := "batched " + to
		return &store.Message{ID: store.NewID(store.PrefixMessage), ProjectID: project, AccountID: account, ConversationID: conversationID,
			PhoneNumberID: number.ID, SenderType: number.Type, ContactID: contactID, Direction: store.DirectionOutbound,
			Status: store.StatusQueued, Body: &body, Encoding: "gsm7", Segments: 1, Type: "sms", FromNumber: number.Number,
			ToNumber: to, Carrier: "sim", CreatedAt: now, UpdatedAt: now}
	}
	// fresh is a send to a recipient the account has no contact for.
	fresh := func(to string) store.OutboundSend {
		c := store.Contact{ID: store.NewID(store.PrefixContact), ProjectID: project, AccountID: account, PhoneNumber: to, CreatedAt: now, UpdatedAt: now}
		cv := store.Conversation{ID: store.NewID(store.PrefixConversation), ProjectID: project, AccountID: account,
			PhoneNumberID: number.ID, ContactID: c.ID, CreatedAt: now}
		ev, err := store.NewEvent(project, account, "conversation.created", map[string]string{"id": cv.ID})
		Expect(err).NotTo(HaveOccurred())
		return store.OutboundSend{Message: message(to, cv.ID, c.ID), New: &store.NewPair{Contact: c, Conversation: cv, Event: ev}}
	}
	count := func(ctx context.Context, q string, args ...any) int64 {
		var n int64
		Expect(st.DB().WithContext(ctx).Raw(q, args...).Scan(&n).Error).To(Succeed())
		return n
	}

	It("reads several sends' contexts at once, as LoadSendContext reads each, and a missing account fails only its own", func(ctx context.Context) {
		known := handset()
		first := fresh(known)
		written, err := st.InsertOutboundBatch(ctx, []store.OutboundSend{first})
		Expect(err).NotTo(HaveOccurred())
		Expect(written).To(Equal([]bool{true}))

		keys := []store.SendContextKey{
			{ProjectID: project, AccountID: account, Ref: number.Number, Recipient: known},
			{ProjectID: project, AccountID: "acct_missing", Ref: "", Recipient: known},
			{ProjectID: project, AccountID: account, Ref: "", Recipient: handset()},
			{ProjectID: project, AccountID: account, Ref: "+19990000000", Recipient: known},
			{ProjectID: project, AccountID: account, Ref: "", Recipient: known}, // the context of the third
		}
		scs, errs, err := st.LoadSendContexts(ctx, keys)
		Expect(err).NotTo(HaveOccurred())
		Expect(errs[1]).To(MatchError(store.ErrNotFound))
		Expect(scs[1]).To(BeNil())
		for _, i := range []int{0, 2, 3, 4} {
			Expect(errs[i]).NotTo(HaveOccurred())
			one, err := st.LoadSendContext(ctx, keys[i].ProjectID, keys[i].AccountID, keys[i].Ref, keys[i].Recipient)
			Expect(err).NotTo(HaveOccurred())
			Expect(utcTimes(scs[i])).To(Equal(utcTimes(one)), "key %d", i)
		}
		Expect(scs[0].Known.Complete()).To(BeTrue())
		Expect(scs[0].Known.Conversation.ID).To(Equal(first.New.Conversation.ID))
		Expect(scs[2].Known.Contact).To(BeNil())
		Expect(scs[3].Sender).To(BeNil())
		Expect(scs[4].Known.Conversation.ID).To(Equal(first.New.Conversation.ID))
	})

	It("reads a batch of sends from many accounts (each account's context read for every send) as LoadSendContext reads each", func(ctx context.Context) {
		known := handset()
		first := fresh(known)
		_, err := st.InsertOutboundBatch(ctx, []store.OutboundSend{first})
		Expect(err).NotTo(HaveOccurred())
		// More accounts than the read takes once each (store.sendReadContextsMax, 32), one of them archived.
		keys := []store.SendContextKey{{ProjectID: project, AccountID: account, Recipient: known}}
		for i := range 40 {
			a := &store.Account{ProjectID: project, Name: fmt.Sprintf("many %d", i)}
			Expect(st.CreateAccount(ctx, a)).To(Succeed())
			if i%2 == 0 {
				Expect(st.InsertPhoneNumber(ctx, &store.PhoneNumber{ProjectID: project, AccountID: &a.ID,
					Number: fmt.Sprintf("+1998%07d", batchHandsets.Add(1)), Type: store.NumberTollFree, Country: "US", Carrier: "sim"})).To(Succeed())
			}
			keys = append(keys, store.SendContextKey{ProjectID: project, AccountID: a.ID, Recipient: handset()})
		}
		Expect(st.DB().WithContext(ctx).Exec("UPDATE accounts SET archived_at = ? WHERE id = ?", now, keys[7].AccountID).Error).To(Succeed())
		keys = append(keys, store.SendContextKey{ProjectID: project, AccountID: "acct_missing", Recipient: known},
			store.SendContextKey{ProjectID: project, AccountID: account, Ref: number.Number, Recipient: known})
		scs, errs, err := st.LoadSendContexts(ctx, keys)
		Expect(err).NotTo(HaveOccurred())
		Expect(errs[len(keys)-2]).To(MatchError(store.ErrNotFound))
		for i, k := range keys {
			if i == len(keys)-2 {
				continue
			}
			Expect(errs[i]).NotTo(HaveOccurred())
			one, err := st.LoadSendContext(ctx, k.ProjectID, k.AccountID, k.Ref, k.Recipient)
			Expect(err).NotTo(HaveOccurred())
			Expect(utcTimes(scs[i])).To(Equal(utcTimes(one)), "key %d", i)
		}
		Expect(scs[0].Known.Conversation.ID).To(Equal(first.New.Conversation.ID))
		Expect(scs[7].Archived).To(BeTrue())
		Expect(scs[2].Sender).To(BeNil())
	})

	It("writes a batch's new pairs, events and known-pair messages together, and skips only a send whose contact exists by then", func(ctx context.Context) {
		ep := &store.WebhookEndpoint{ID: store.NewID(store.PrefixWebhookEndpoint), ProjectID: project, URL: "https://hooks.example/batch",
			Secret: "whsec_batch", Events: "conversation.created", Enabled: true, CreatedAt: now, UpdatedAt: now}
		Expect(st.CreateWebhookEndpoint(ctx, ep)).To(Succeed())

		// A pair that exists, and a contact someone else created after the sends read their contexts.
		prior := fresh(handset())
		_, err := st.InsertOutboundBatch(ctx, []store.OutboundSend{prior})
		Expect(err).NotTo(HaveOccurred())
		raced := handset()
		Expect(st.CreateContact(ctx, &store.Contact{ProjectID: project, AccountID: account, PhoneNumber: raced})).To(Succeed())

		a, b, lost := fresh(handset()), fresh(handset()), fresh(raced)
		again := store.OutboundSend{Message: message(prior.Message.ToNumber, prior.New.Conversation.ID, prior.New.Contact.ID)}
		later := now.Add(time.Hour)
		again.Message.Status, again.Message.SendAt = store.StatusScheduled, &later
		written, err := st.InsertOutboundBatch(ctx, []store.OutboundSend{a, lost, again, b})
		Expect(err).NotTo(HaveOccurred())
		Expect(written).To(Equal([]bool{true, false, true, true}))

		for _, s := range []store.OutboundSend{a, b} {
			Expect(count(ctx, `SELECT COUNT(*) FROM contacts WHERE id = ? AND phone_number = ?`, s.New.Contact.ID, s.Message.ToNumber)).To(BeEquivalentTo(1))
			Expect(count(ctx, `SELECT COUNT(*) FROM conversations WHERE id = ? AND contact_id = ?`, s.New.Conversation.ID, s.New.Contact.ID)).To(BeEquivalentTo(1))
			Expect(count(ctx, `SELECT COUNT(*) FROM events WHERE type = 'conversation.created' AND data LIKE ?`, "%"+s.New.Conversation.ID+"%")).To(BeEquivalentTo(1))
		}
		for _, s := range []store.OutboundSend{a, b, again} {
			v, err := st.GetMessage(ctx, project, s.Message.ID)
			Expect(err).NotTo(HaveOccurred())
			Expect(v.Status).To(Equal(s.Message.Status))
			Expect(v.ConversationID).To(Equal(s.Message.ConversationID))
			Expect(v.Contact.PhoneNumber).To(Equal(s.Message.ToNumber))
			Expect(count(ctx, `SELECT COUNT(*) FROM outbound_queue WHERE message_id = ?`, s.Message.ID)).To(BeEquivalentTo(1))
		}
		var due time.Time
		Expect(st.DB().WithContext(ctx).Raw(`SELECT due_at FROM outbound_queue WHERE message_id = ?`, again.Message.ID).Row().Scan(&due)).To(Succeed())
		Expect(due.UTC()).To(BeTemporally("==", later))
		// The lost send wrote nothing: no message, conversation or event, and the contact is the other one.
		_, err = st.GetMessage(ctx, project, lost.Message.ID)
		Expect(err).To(MatchError(store.ErrNotFound))
		Expect(count(ctx, `SELECT COUNT(*) FROM conversations WHERE id = ?`, lost.New.Conversation.ID)).To(BeZero())
		Expect(count(ctx, `SELECT COUNT(*) FROM contacts WHERE id = ?`, lost.New.Contact.ID)).To(BeZero())
		Expect(count(ctx, `SELECT COUNT(*) FROM events WHERE data LIKE ?`, "%"+lost.New.Conversation.ID+"%")).To(BeZero())
		// One delivery per conversation.created event the batch recorded (the prior one's too).
		Expect(count(ctx, `SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ?`, ep.ID)).To(BeEquivalentTo(3))
	})

	It("finds a send's contact through its account and recipient in the read's generic plan, even one made on an empty table (PostgreSQL)", func(ctx context.Context) {
		if st.Dialect() != store.Postgres {
			Skip("PostgreSQL's plan")
		}
		// The read runs its generic plan (store.LoadSendContexts), which a connection may make
		// while contacts is empty, as on a new database: emptied here in a transaction that is
		// rolled back. Both statements: a batch's contexts read once each, and each send's read
		// for itself (a batch of many accounts).
		for _, read := range []struct{ params, statement, args string }{
			{"text[], text[], text[], int[], text[], bool[]", store.LoadSendContextsPG, `'{p}', '{a}', '{""}', '{1}', '{+16475550100}', '{t}'`},
			{"text[], text[], text[], text[]", store.LoadSendContextsEachPG, `'{p}', '{a}', '{""}', '{+16475550100}'`},
		} {
			var plan []string
			err := st.DB().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
				for _, q := range []string{"TRUNCATE contacts CASCADE", "SET LOCAL plan_cache_mode = force_generic_plan",
					"PREPARE send_read_plan (" + read.params + ") AS " + read.statement} {
					if err := tx.Exec(q).Error; err != nil {
						return err
					}
				}
				defer tx.Exec("DEALLOCATE send_read_plan")
				if err := tx.Raw(`EXPLAIN EXECUTE send_read_plan (` + read.args + `)`).Scan(&plan).Error; err != nil {
					return err
				}
				return errors.New("rolled back")
			})
			Expect(err).To(MatchError("rolled back"))
			Expect(strings.Join(plan, "\n")).To(And(ContainSubstring("using contacts_account_phone on contacts"),
				Not(ContainSubstring("using contacts_account on contacts"))), read.params)
		}
	})

	It("writes the sends of a plain context without a read, to a new recipient or a known pair that may be sent to, and none of a context changed since it was read (PostgreSQL)", func(ctx context.Context) {
		if st.Dialect() != store.Postgres {
			Skip("InsertOutboundPlain is PostgreSQL's")
		}
		// A toll-free number with an active toll-free campaign may send.
		Expect(st.DB().WithContext(ctx).Exec(`INSERT INTO toll_free_campaigns (id, project_id, account_id, phone_number_id, carrier,
			status, params, created_at, updated_at) VALUES (?, ?, ?, ?, 'sim', ?, '{}', ?, ?)`, store.NewID(store.PrefixTollFreeCampaign),
			project, account, number.ID, store.CampaignActive, now, now).Error).To(Succeed())
		sc, err := st.LoadSendContext(ctx, project, account, "", handset())
		Expect(err).NotTo(HaveOccurred())
		Expect(sc.Sender).NotTo(BeNil())
		plain := []store.PlainContext{{ProjectID: project, AccountID: account, Sender: sc.Sender.PhoneNumber}}
		send := func(o store.OutboundSend) store.PlainSend {
			return store.PlainSend{Message: o.Message, New: o.New}
		}

		// A known pair, a known contact who opted out, and a contact without a conversation.
		prior, out := fresh(handset()), fresh(handset())
		_, err = st.InsertOutboundBatch(ctx, []store.OutboundSend{prior, out})
		Expect(err).NotTo(HaveOccurred())
		Expect(st.SetContactOptedOut(ctx, out.New.Contact.ID, true, now)).To(Succeed())
		alone := handset()
		Expect(st.CreateContact(ctx, &store.Contact{ProjectID: project, AccountID: account, PhoneNumber: alone})).To(Succeed())

		a, known, optedOut, noConversation := fresh(handset()), fresh(prior.Message.ToNumber), fresh(out.Message.ToNumber), fresh(alone)
		res, held, err := st.InsertOutboundPlain(ctx, plain, []store.PlainSend{send(a), send(known), send(optedOut), send(noConversation)})
		Expect(err).NotTo(HaveOccurred())
		Expect(held).To(Equal([]bool{true}))
		Expect(res).To(HaveLen(4))
		Expect(res[0]).To(Equal(store.PlainResult{Written: true}))
		Expect(res[1].Written).To(BeTrue())
		Expect(res[1].Known.Contact.ID).To(Equal(prior.New.Contact.ID))
		Expect(res[1].Known.Conversation.ID).To(Equal(prior.New.Conversation.ID))
		Expect(known.Message.ConversationID).To(Equal(prior.New.Conversation.ID), "the message names the pair it went to")
		Expect(res[2:]).To(Equal([]store.PlainResult{{}, {}}))

		v, err := st.GetMessage(ctx, project, known.Message.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(v.ConversationID).To(Equal(prior.New.Conversation.ID))
		Expect(v.Contact.ID).To(Equal(prior.New.Contact.ID))
		Expect(count(ctx, `SELECT COUNT(*) FROM conversations WHERE id = ?`, known.New.Conversation.ID)).To(BeZero())
		Expect(count(ctx, `SELECT COUNT(*) FROM events WHERE data LIKE ?`, "%"+known.New.Conversation.ID+"%")).To(BeZero())
		Expect(count(ctx, `SELECT COUNT(*) FROM contacts WHERE id = ?`, a.New.Contact.ID)).To(BeEquivalentTo(1))
		Expect(count(ctx, `SELECT COUNT(*) FROM events WHERE type = 'conversation.created' AND data LIKE ?`, "%"+a.New.Conversation.ID+"%")).To(BeEquivalentTo(1))
		for _, o := range []store.OutboundSend{a, known} {
			Expect(count(ctx, `SELECT COUNT(*) FROM outbound_queue WHERE message_id = ?`, o.Message.ID)).To(BeEquivalentTo(1))
		}
		for _, o := range []store.OutboundSend{optedOut, noConversation} {
			Expect(count(ctx, `SELECT COUNT(*) FROM messages WHERE id = ?`, o.Message.ID)).To(BeZero())
			Expect(count(ctx, `SELECT COUNT(*) FROM contacts WHERE id = ?`, o.New.Contact.ID)).To(BeZero())
		}

		// Each change of the context since it was read: none of its sends is written.
		for _, change := range []struct {
			what string
			ctx  func(*store.PlainContext)
			undo string
			q    string
		}{
			{what: "a name it did not read", ctx: func(c *store.PlainContext) { c.Sender.Name = ptr("Renamed") }},
			{what: "metadata it did not read", ctx: func(c *store.PlainContext) { c.Sender.Metadata = store.Metadata{"k": "v"} }},
			{what: "an account archived", q: `UPDATE accounts SET archived_at = now() WHERE id = ?`, undo: `UPDATE accounts SET archived_at = NULL WHERE id = ?`},
			{what: "quiet hours on", q: `UPDATE accounts SET quiet_hours = TRUE WHERE id = ?`, undo: `UPDATE accounts SET quiet_hours = FALSE WHERE id = ?`},
			{what: "a number released", q: `UPDATE phone_numbers SET released_at = now() WHERE account_id = ?`, undo: `UPDATE phone_numbers SET released_at = NULL WHERE account_id = ?`},
			{what: "a toll-free campaign ended", q: `UPDATE toll_free_campaigns SET status = 'deactivated' WHERE account_id = ?`, undo: `UPDATE toll_free_campaigns SET status = 'active' WHERE account_id = ?`},
		} {
			c := plain[0]
			if change.ctx != nil {
				change.ctx(&c)
			}
			if change.q != "" {
				Expect(st.DB().WithContext(ctx).Exec(change.q, account).Error).To(Succeed())
			}
			b := fresh(handset())
			res, held, err := st.InsertOutboundPlain(ctx, []store.PlainContext{c}, []store.PlainSend{send(b)})
			Expect(err).NotTo(HaveOccurred())
			Expect(held).To(Equal([]bool{false}), change.what)
			Expect(res).To(Equal([]store.PlainResult{{}}), change.what)
			Expect(count(ctx, `SELECT COUNT(*) FROM messages WHERE id = ?`, b.Message.ID)).To(BeZero(), change.what)
			if change.undo != "" {
				Expect(st.DB().WithContext(ctx).Exec(change.undo, account).Error).To(Succeed())
			}
		}
		b := fresh(handset())
		res, held, err = st.InsertOutboundPlain(ctx, plain, []store.PlainSend{send(b)})
		Expect(err).NotTo(HaveOccurred())
		Expect(held).To(Equal([]bool{true}))
		Expect(res).To(Equal([]store.PlainResult{{Written: true}}))
	})

	It("writes one new contact per recipient when a batch holds two sends to it", func(ctx context.Context) {
		to := handset()
		one, two := fresh(to), fresh(to)
		written, err := st.InsertOutboundBatch(ctx, []store.OutboundSend{one, two})
		Expect(err).NotTo(HaveOccurred())
		Expect(written).To(Equal([]bool{true, false}))
		Expect(count(ctx, `SELECT COUNT(*) FROM contacts WHERE account_id = ? AND phone_number = ?`, account, to)).To(BeEquivalentTo(1))
		Expect(count(ctx, `SELECT COUNT(*) FROM messages WHERE to_number = ?`, to)).To(BeEquivalentTo(1))
	})
})

// utcTimes puts a send context's times in UTC, so that contexts read by different drivers compare.
func utcTimes(sc *store.SendContext) *store.SendContext {
	if sc.Sender != nil {
		sc.Sender.CreatedAt, sc.Sender.UpdatedAt = sc.Sender.CreatedAt.UTC(), sc.Sender.UpdatedAt.UTC()
	}
	if k := sc.Known; k != nil {
		if k.Contact != nil {
			k.Contact.CreatedAt, k.Contact.UpdatedAt = k.Contact.CreatedAt.UTC(), k.Contact.UpdatedAt.UTC()
		}
		if k.Conversation != nil {
			k.Conversation.CreatedAt = k.Conversation.CreatedAt.UTC()
		}
	}
	return sc
}
