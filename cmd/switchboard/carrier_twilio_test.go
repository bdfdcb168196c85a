package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers/twilio"
)

var _ = Describe("SWITCHBOARD_CARRIER=twilio", func() {
	var c *cli
	BeforeEach(func() {
		c = newCLI()
		setenv("SWITCHBOARD_CARRIER", "twilio")
	})
	const sid, token = "AC0123456789abcdef0123456789abcdef", "very-secret-token"

	DescribeTable("serve refuses a missing or malformed Twilio setting, naming it and never the token",
		func(setting string, env map[string]string, args ...string) {
			for k, v := range env {
				setenv(k, v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var stderr bytes.Buffer
			err := run(ctx, append([]string{"serve", "--data-dir", c.dataDir, "--listen", "127.0.0.1:0"}, args...), io.Discard, &stderr)
			Expect(err).To(MatchError(ContainSubstring(setting)))
			Expect(err.Error() + stderr.String()).NotTo(ContainSubstring(token))
			Expect(c.dbPath()).NotTo(BeAnExistingFile(), "nothing started")
		},
		Entry("no account SID", "SWITCHBOARD_TWILIO_ACCOUNT_SID", map[string]string{"SWITCHBOARD_TWILIO_AUTH_TOKEN": token}),
		Entry("a malformed account SID", "SWITCHBOARD_TWILIO_ACCOUNT_SID", map[string]string{"SWITCHBOARD_TWILIO_AUTH_TOKEN": token},
			"--twilio-account-sid=SK123"),
		Entry("no auth token", "SWITCHBOARD_TWILIO_AUTH_TOKEN", map[string]string{"SWITCHBOARD_TWILIO_ACCOUNT_SID": sid}),
		Entry("a relative API base", "SWITCHBOARD_TWILIO_API_BASE",
			map[string]string{"SWITCHBOARD_TWILIO_ACCOUNT_SID": sid, "SWITCHBOARD_TWILIO_AUTH_TOKEN": token, "SWITCHBOARD_TWILIO_API_BASE": "api.twilio.com"}),
	)

	It("keeps the auth token out of the help, which offers no flag for it", func() {
		setenv("SWITCHBOARD_TWILIO_AUTH_TOKEN", token)
		var stdout bytes.Buffer
		Expect(run(context.Background(), []string{"serve", "-h"}, &stdout, io.Discard)).To(Succeed())
		Expect(stdout.String()).To(SatisfyAll(ContainSubstring("SWITCHBOARD_TWILIO_ACCOUNT_SID"), ContainSubstring("SWITCHBOARD_TWILIO_AUTH_TOKEN_FILE"),
			Not(ContainSubstring(token)), Not(ContainSubstring("--twilio-auth-token"))))
	})

	It("makes Twilio the default carrier, keeps the simulator for numbers it provides, and mounts Twilio's callbacks", func(ctx SpecContext) {
		setenv("SWITCHBOARD_TWILIO_ACCOUNT_SID", sid)
		setenv("SWITCHBOARD_TWILIO_AUTH_TOKEN", token)
		_, err := c.run("migrate")
		Expect(err).NotTo(HaveOccurred())
		cfg := &Config{Carrier: "twilio", PublicURL: "https://sb.example.test", SimReviewDelay: time.Second,
			Twilio: TwilioConfig{AccountSID: sid, AuthToken: token, APIBase: twilio.DefaultAPIBase}}
		core, routes, err := buildCore(cfg, c.openStore(), slog.New(slog.NewTextHandler(io.Discard, nil)))
		Expect(err).NotTo(HaveOccurred())
		Expect(core.Carriers.Default().Name()).To(Equal(twilio.Name))
		Expect(core.Carriers.Get("sim")).NotTo(BeNil())
		Expect(routes).To(HaveKey(twilio.Name))
	})
})
