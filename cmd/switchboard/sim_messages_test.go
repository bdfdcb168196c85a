package main

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/store"
)

// nopReporter accepts every report.
type nopReporter struct{}

func (nopReporter) Report(context.Context, carriers.Report) error { return nil }

var _ = Describe("switchboard sim inbound and sim outbox", func() {
	var (
		c      *cli
		st     *store.Store
		acct   *store.Account
		number = "+19995550777"
	)
	BeforeEach(func(ctx context.Context) {
		c = newCLI()
		project := c.createProject("Sim")
		st = c.openStore()
		acct = &store.Account{ProjectID: project, Name: "Acme Dental"}
		Expect(st.CreateAccount(ctx, acct)).To(Succeed())
		now := time.Now().UTC()
		Expect(st.DB().Exec(`INSERT INTO phone_numbers (id, project_id, account_id, number, type, country, metadata, carrier,
			created_at, updated_at) VALUES (?, ?, ?, ?, 'short_code', 'US', '{}', 'sim', ?, ?)`,
			store.NewID(store.PrefixPhoneNumber), project, acct.ID, number, now, now).Error).To(Succeed())
	})

	It("injects a handset's STOP through the inbound path: the contact opts out and a confirmation is queued", func(ctx context.Context) {
		var out map[string]any
		c.json(&out, "sim inbound", "--from", "+1 415 555 0199", "--to", number, "--body", "STOP")
		Expect(out).To(SatisfyAll(HaveKeyWithValue("carrier_id", HavePrefix("simin_")), HaveKeyWithValue("body", "STOP")))
		contacts, _, err := st.ListContacts(ctx, acct.ProjectID, acct.ID, store.Page{})
		Expect(err).NotTo(HaveOccurred())
		Expect(contacts).To(ConsistOf(SatisfyAll(HaveField("PhoneNumber", "+14155550199"), HaveField("OptedOut", true))))
		msgs, _, err := st.ListMessages(ctx, acct.ProjectID, acct.ID, "", store.Page{})
		Expect(err).NotTo(HaveOccurred())
		Expect(msgs).To(ConsistOf(
			SatisfyAll(HaveField("Message.Direction", "inbound"), HaveField("Message.Status", "received")),
			SatisfyAll(HaveField("Message.Direction", "outbound"), HaveField("Message.Status", "queued"), HaveField("Message.AutoReply", true)),
		))
	})

	It("refuses an inbound message without --from, --to and --body", func() {
		_, err := c.run("sim inbound", "--from", "+14155550199")
		Expect(err).To(MatchError(ContainSubstring("--from, --to and --body are required")))
	})

	It("lists what handsets received, as JSON, filtered by --to", func(ctx context.Context) {
		carrier, err := sim.New(sim.Config{Store: st.Sim(), Reporter: nopReporter{}})
		Expect(err).NotTo(HaveOccurred())
		for i, to := range []string{"+14155550101", "+14155550102"} {
			_, err := carrier.Submit(ctx, carriers.Outbound{Reference: store.NewID("msg"), From: number, To: to,
				Body: "Your code is 12345" + string(rune('0'+i)), Encoding: "gsm7", Segments: 1,
				Media: []carriers.Media{{URL: "https://example.com/a.png", ContentType: "image/png"}}})
			Expect(err).NotTo(HaveOccurred())
		}
		var entries []map[string]any
		c.json(&entries, "sim outbox", "--to", "+14155550102")
		Expect(entries).To(ConsistOf(SatisfyAll(
			HaveKeyWithValue("to", "+14155550102"), HaveKeyWithValue("from", number), HaveKeyWithValue("body", "Your code is 123451"),
			HaveKeyWithValue("parts", BeNumerically("==", 1)), HaveKeyWithValue("media", ConsistOf("https://example.com/a.png")),
		)))
		c.json(&entries, "sim outbox")
		Expect(entries).To(HaveLen(2))
		text, err := c.run("sim outbox")
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(ContainSubstring("Your code is 123450"))
	})
})
