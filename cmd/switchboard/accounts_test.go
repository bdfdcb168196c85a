package main

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("account commands", func() {
	var c *cli
	BeforeEach(func() { c = newCLI() })

	It("show and change an account's quiet hours, and refuse a window that is not one", func() {
		ctx := context.Background()
		st, _, acct := c.account(ctx)
		type quiet struct {
			AccountID  string         `json:"account_id"`
			QuietHours map[string]any `json:"quiet_hours"`
		}
		var out quiet
		c.json(&out, "account quiet-hours", "--account", acct.ID)
		Expect(out).To(Equal(quiet{AccountID: acct.ID, QuietHours: map[string]any{"enabled": false, "start": "08:00", "end": "21:00"}}))

		c.json(&out, "account quiet-hours", "--account", acct.ID, "--on", "--start", "09:30")
		Expect(out.QuietHours).To(Equal(map[string]any{"enabled": true, "start": "09:30", "end": "21:00"}))
		a, err := st.AccountByID(ctx, acct.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect([]any{a.QuietHours, a.QuietHoursStart, a.QuietHoursEnd}).To(Equal([]any{true, 570, 1260}))

		text, err := c.run("account quiet-hours", "--account", acct.ID, "--off")
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(ContainSubstring("off; messages go out from 09:30 to 21:00"))

		for _, bad := range [][]string{{"--start", "21:00"}, {"--end", "9:00"}, {"--on", "--off"}} {
			_, err := c.run("account quiet-hours", append([]string{"--account", acct.ID}, bad...)...)
			Expect(err).To(HaveOccurred(), "%v", bad)
		}
		_, err = c.run("account quiet-hours", "--account", "acct_01jtp4dsdq6de56aa0tfm2e5b3")
		Expect(err).To(MatchError(ContainSubstring("not found")))
		c.json(&out, "account quiet-hours", "--account", acct.ID)
		Expect(out.QuietHours).To(Equal(map[string]any{"enabled": false, "start": "09:30", "end": "21:00"}), "refusals changed nothing")

		_, err = st.ArchiveAccount(ctx, acct.ProjectID, acct.ID, nil)
		Expect(err).NotTo(HaveOccurred())
		_, err = c.run("account quiet-hours", "--account", acct.ID, "--on")
		Expect(err).To(MatchError(ContainSubstring("is archived and cannot be changed")))
		c.json(&out, "account quiet-hours", "--account", acct.ID)
		Expect(out.QuietHours["enabled"]).To(BeFalse(), "an archived account's settings stay as they were")
	})
})
