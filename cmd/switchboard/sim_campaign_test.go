package main

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("switchboard sim campaign", func() {
	var (
		c       *cli
		st      *store.Store
		account *store.Account
	)
	BeforeEach(func(ctx SpecContext) {
		c = newCLI()
		_, err := c.run("migrate")
		Expect(err).NotTo(HaveOccurred())
		st = c.openStore()
		p, err := st.CreateProject(ctx, "Acme")
		Expect(err).NotTo(HaveOccurred())
		account = &store.Account{ProjectID: p.ID, Name: "Acme Dental"}
		Expect(st.CreateAccount(ctx, account)).To(Succeed())
	})
	// inReview stores a 10DLC campaign under review by the simulated carrier.
	inReview := func(ctx context.Context) *store.Campaign {
		cpn := &store.Campaign{ProjectID: account.ProjectID, AccountID: account.ID, Carrier: "sim", Status: store.CampaignInReview,
			Params: store.CampaignParams{Description: "Appointment reminders", Volume: "low"}}
		ExpectWithOffset(1, st.CreateCampaign(ctx, cpn)).To(Succeed())
		return cpn
	}

	It("approves a campaign under review through the core, once", func(ctx SpecContext) {
		cpn := inReview(ctx)
		var out map[string]any
		c.json(&out, "sim campaign", "approve", cpn.ID)
		Expect(out).To(Equal(map[string]any{"id": cpn.ID, "status": "active", "changed": true}))
		events, _, err := st.ListEvents(ctx, account.ProjectID, "campaign.approved", store.Page{})
		Expect(err).NotTo(HaveOccurred())
		Expect(events).To(HaveLen(1))

		c.json(&out, "sim campaign", "approve", cpn.ID)
		Expect(out).To(HaveKeyWithValue("changed", false))
		text, err := c.run("sim campaign", "reject", cpn.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(ContainSubstring("unchanged"))
		events, _, _ = st.ListEvents(ctx, account.ProjectID, "campaign.approved", store.Page{})
		Expect(events).To(HaveLen(1))
	})

	It("takes its flags after the verdict and id too", func(ctx SpecContext) {
		cpn := inReview(ctx)
		text, err := c.run("sim campaign", "reject", cpn.ID, "--reason", "no opt-out language", "--json")
		Expect(err).NotTo(HaveOccurred())
		var out map[string]any
		Expect(json.Unmarshal([]byte(text), &out)).To(Succeed(), text)
		Expect(out).To(Equal(map[string]any{"id": cpn.ID, "status": "rejected", "changed": true}))
		got, err := st.CampaignByID(ctx, cpn.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.RejectionReason).To(HaveValue(Equal("no opt-out language")))
	})

	It("rejects a toll-free campaign with the reason given", func(ctx SpecContext) {
		pn := &store.PhoneNumber{ProjectID: account.ProjectID, AccountID: &account.ID, Number: "+18335550142",
			Type: store.NumberTollFree, Country: "US", Carrier: "sim"}
		Expect(st.InsertPhoneNumber(ctx, pn)).To(Succeed())
		tfc := &store.TollFreeCampaign{ProjectID: account.ProjectID, AccountID: account.ID, PhoneNumberID: pn.ID,
			Carrier: "sim", Status: store.CampaignInReview}
		Expect(st.CreateTollFreeCampaign(ctx, tfc)).To(Succeed())
		text, err := c.run("sim campaign", "--reason", "sample messages lack opt-out language", "reject", tfc.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(ContainSubstring("in_review -> rejected"))
		got, err := st.TollFreeCampaignByID(ctx, tfc.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.RejectionReason).To(HaveValue(Equal("sample messages lack opt-out language")))
	})

	DescribeTable("refuses what it cannot do",
		func(message string, args ...string) {
			_, err := c.run("sim campaign", args...)
			Expect(err).To(MatchError(ContainSubstring(message)))
		},
		Entry("no verdict", "usage", "cpn_01m80b5xceezebxkpwpb9v23gf"),
		Entry("an unknown verdict", "usage", "pause", "cpn_01m80b5xceezebxkpwpb9v23gf"),
		Entry("an id that is not a campaign's", "not a campaign id", "approve", "msg_01m80b5xceezebxkpwpb9v23gf"),
		Entry("a campaign that does not exist", "no campaign", "approve", "cpn_01m80b5xceezebxkpwpb9v23gf"),
	)
})
