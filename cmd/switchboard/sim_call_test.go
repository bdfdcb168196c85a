package main

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("switchboard sim call", func() {
	var (
		c       *cli
		st      *store.Store
		account *store.Account
	)
	const number = "+14155550142"
	BeforeEach(func(ctx SpecContext) {
		c = newCLI()
		_, err := c.run("migrate")
		Expect(err).NotTo(HaveOccurred())
		st = c.openStore()
		p, err := st.CreateProject(ctx, "Acme")
		Expect(err).NotTo(HaveOccurred())
		account = &store.Account{ProjectID: p.ID, Name: "Acme Dental"}
		Expect(st.CreateAccount(ctx, account)).To(Succeed())
		Expect(st.InsertPhoneNumber(ctx, &store.PhoneNumber{ProjectID: p.ID, AccountID: &account.ID, Number: number,
			Type: store.NumberLocal, Country: "US", Carrier: "sim"})).To(Succeed())
	})

	It("places an answered call by default", func() {
		var out map[string]any
		c.json(&out, "sim call", "--from", "+16465550100", "--to", number, "--duration", "20")
		Expect(out).To(SatisfyAll(HaveKeyWithValue("status", "completed"), HaveKeyWithValue("duration", BeEquivalentTo(25)),
			HaveKeyWithValue("call_id", HavePrefix("call_")), HaveKeyWithValue("voicemail_id", BeNil())))
	})

	It("leaves a voicemail of the length asked for on an unanswered call", func(ctx SpecContext) {
		var out map[string]any
		c.json(&out, "sim call", "--from", "+16465550100", "--to", number, "--no-answer", "--voicemail-seconds", "2")
		Expect(out).To(SatisfyAll(HaveKeyWithValue("status", "missed"), HaveKeyWithValue("voicemail_id", HavePrefix("vml_")),
			HaveKeyWithValue("recording_id", HavePrefix("rec_"))))
		r, err := st.RecordingFile(ctx, out["recording_id"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Data).To(HaveLen(44 + 2*8000*2))
		Expect(r.ContentType).To(Equal("audio/wav"))

		text, err := c.run("sim call", "--from", "+16465550100", "--to", number, "--no-answer", "--voicemail-seconds", "0")
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(ContainSubstring("no_answer"))
	})

	DescribeTable("refuses what it cannot do",
		func(message string, args ...string) {
			_, err := c.run("sim call", args...)
			Expect(err).To(MatchError(ContainSubstring(message)))
		},
		Entry("no --to", "required", "--from", "+16465550100"),
		Entry("both --answer and --no-answer", "exclude", "--from", "+16465550100", "--to", number, "--answer", "--no-answer"),
		Entry("a number nobody holds", "no account holds", "--from", "+16465550100", "--to", "+14155550199"),
		Entry("a voicemail too long", "voicemail lasts", "--from", "+16465550100", "--to", number, "--no-answer", "--voicemail-seconds", "301"),
	)
})
