package main

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/store"
)

var _ = Describe("SWITCHBOARD_VERIFICATION_SENDER", func() {
	// demoNumber is the shared demo number the migrations seed.
	const demoNumber = "+18335550000"

	// parseConfig reads the configuration as serve does, from args and the environment.
	parseConfig := func(args ...string) (*Config, error) {
		return serveConfig(args...)
	}

	It("defaults to empty, which means the shared demo number", func() {
		cfg, err := parseConfig()
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.VerificationSender).To(BeEmpty())
	})

	DescribeTable("takes a phone number from the flag or its variable, normalised to E.164",
		func(env string, args []string, want string) {
			if env != "" {
				setenv("SWITCHBOARD_VERIFICATION_SENDER", env)
			}
			cfg, err := parseConfig(args...)
			Expect(err).NotTo(HaveOccurred())
			Expect(cfg.VerificationSender).To(Equal(want))
		},
		Entry("an E.164 flag", "", []string{"--verification-sender=+14155550100"}, "+14155550100"),
		Entry("a variable written as people do", "+1 (415) 555-0100", nil, "+14155550100"),
		Entry("a flag over its variable", "+14155550100", []string{"--verification-sender=+14155550199"}, "+14155550199"),
	)

	DescribeTable("refuses a value that is not a phone number, naming the variable and the flag",
		func(env string, args ...string) {
			if env != "" {
				setenv("SWITCHBOARD_VERIFICATION_SENDER", env)
			}
			_, err := parseConfig(args...)
			Expect(err).To(MatchError(SatisfyAll(ContainSubstring("SWITCHBOARD_VERIFICATION_SENDER"),
				ContainSubstring("--verification-sender"), ContainSubstring("E.164"))))
		},
		Entry("a word in the flag", "", "--verification-sender=demo"),
		Entry("too few digits in the variable", "+1415"),
		Entry("blanks only", "", "--verification-sender= "),
	)

	Describe("serve", func() {
		var (
			c       *cli
			st      *store.Store
			key     string
			handset = "+14155550123"
		)
		BeforeEach(func() {
			c = newCLI()
			project := c.createProject("Verify")
			_, key = c.createKey(project)
			st = c.openStore()
		})

		// verify creates an account and starts a verification of handset, returning the status and body.
		verify := func(s *servedAPI) (int, string) {
			status, body := s.do("POST", "/accounts", key, `{"name":"Acme Dental"}`)
			ExpectWithOffset(1, status).To(Equal(http.StatusCreated), body)
			var acct map[string]any
			ExpectWithOffset(1, json.Unmarshal([]byte(body), &acct)).To(Succeed())
			return s.do("POST", "/accounts/"+acct["id"].(string)+"/verifications", key, `{"phone_number":"`+handset+`"}`)
		}
		// sentFrom waits for the code to reach the handset and returns the number it came from.
		sentFrom := func(ctx context.Context) string {
			var entries []sim.OutboxEntry
			EventuallyWithOffset(1, func(g Gomega) {
				var err error
				entries, err = sim.Outbox(ctx, st.Sim(), handset)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(entries).To(HaveLen(1))
			}).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
			ExpectWithOffset(1, entries[0].Body).To(MatchRegexp(`^Your verification code is \d{6}\.`))
			return entries[0].From
		}

		It("sends codes from the shared demo number by default", func(ctx SpecContext) {
			s := c.serve("--sim-latency", "10ms")
			status, body := verify(s)
			Expect(status).To(Equal(http.StatusCreated), body)
			Expect(sentFrom(ctx)).To(Equal(demoNumber))
			Expect(s.stop()).To(Succeed())
		})

		It("sends codes from the configured number the installation holds", func(ctx SpecContext) {
			const own = "+14155550100"
			now := time.Now().UTC()
			Expect(st.DB().Exec(`INSERT INTO phone_numbers (id, project_id, account_id, number, type, country, metadata, carrier,
				created_at, updated_at) VALUES (?, '', NULL, ?, 'local', 'US', '{}', 'sim', ?, ?)`,
				store.NewID(store.PrefixPhoneNumber), own, now, now).Error).To(Succeed())
			s := c.serve("--sim-latency", "10ms", "--verification-sender", "+1 415 555 0100")
			status, body := verify(s)
			Expect(status).To(Equal(http.StatusCreated), body)
			Expect(sentFrom(ctx)).To(Equal(own))
			Expect(s.stop()).To(Succeed())
		})

		It("answers 422 no_phone_number, not falling back to the demo number, while the configured number is not held", func(ctx SpecContext) {
			s := c.serve("--verification-sender", "+14155550100")
			status, body := verify(s)
			Expect(status).To(Equal(http.StatusUnprocessableEntity), body)
			Expect(body).To(ContainSubstring(`"no_phone_number"`))
			entries, err := sim.Outbox(ctx, st.Sim(), handset)
			Expect(err).NotTo(HaveOccurred())
			Expect(entries).To(BeEmpty())
			Expect(s.stop()).To(Succeed())
		})
	})
})
