package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/carriers/smpp"
	"github.com/switchboard/switchboard/carriers/telnyx"
	"github.com/switchboard/switchboard/carriers/twilio"
)

var _ = Describe("SWITCHBOARD_CARRIER=telnyx and lists of carriers", func() {
	var c *cli
	BeforeEach(func() { c = newCLI() })
	const key, pub = "KEY0123456789secret", "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="

	DescribeTable("serve refuses a missing or malformed carrier setting, naming it and never the key",
		func(carrier, setting string, env map[string]string) {
			setenv("SWITCHBOARD_CARRIER", carrier)
			for k, v := range env {
				setenv(k, v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var stderr bytes.Buffer
			err := run(ctx, []string{"serve", "--data-dir", c.dataDir, "--listen", "127.0.0.1:0"}, io.Discard, &stderr)
			Expect(err).To(MatchError(ContainSubstring(setting)))
			Expect(err.Error() + stderr.String()).NotTo(ContainSubstring(key))
			Expect(c.dbPath()).NotTo(BeAnExistingFile(), "nothing started")
		},
		Entry("no Telnyx API key", "telnyx", "SWITCHBOARD_TELNYX_API_KEY",
			map[string]string{"SWITCHBOARD_TELNYX_PUBLIC_KEY": pub, "SWITCHBOARD_TELNYX_MESSAGING_PROFILE_ID": "p"}),
		Entry("a Telnyx public key that is not an Ed25519 key", "telnyx", "SWITCHBOARD_TELNYX_PUBLIC_KEY",
			map[string]string{"SWITCHBOARD_TELNYX_API_KEY": key, "SWITCHBOARD_TELNYX_PUBLIC_KEY": "bm90IGEga2V5", "SWITCHBOARD_TELNYX_MESSAGING_PROFILE_ID": "p"}),
		Entry("no messaging profile", "telnyx", "SWITCHBOARD_TELNYX_MESSAGING_PROFILE_ID",
			map[string]string{"SWITCHBOARD_TELNYX_API_KEY": key, "SWITCHBOARD_TELNYX_PUBLIC_KEY": pub}),
		Entry("an unknown carrier in a list", "sim,nexmo", "nexmo", nil),
		Entry("a carrier listed twice", "sim,sim", "twice", nil),
		Entry("the settings of a second carrier of the list", "sim,telnyx", "SWITCHBOARD_TELNYX_API_KEY", nil),
	)

	It("runs every carrier of the list, the first the default, the simulator beside them, and mounts their callbacks", func() {
		_, err := c.run("migrate")
		Expect(err).NotTo(HaveOccurred())
		cfg := &Config{Carrier: "telnyx, twilio, smpp", PublicURL: "https://sb.example.test", SimReviewDelay: time.Second,
			Telnyx: TelnyxConfig{APIKey: key, PublicKey: pub, MessagingProfileID: "p"},
			Twilio: TwilioConfig{AccountSID: "AC0123456789abcdef0123456789abcdef", AuthToken: "t"},
			SMPP:   SMPPConfig{Addr: "127.0.0.1:1", SystemID: "acme", Window: 10}}
		core, routes, err := buildCore(cfg, c.openStore(), slog.New(slog.NewTextHandler(io.Discard, nil)))
		Expect(err).NotTo(HaveOccurred())
		Expect(core.Carriers.Default().Name()).To(Equal(telnyx.Name))
		for _, name := range []string{twilio.Name, smpp.Name, sim.Name} {
			_, err := core.Carriers.Get(name)
			Expect(err).NotTo(HaveOccurred(), name)
		}
		Expect(routes).To(SatisfyAll(HaveKey(telnyx.Name), HaveKey(twilio.Name)))
		rec := httptest.NewRecorder()
		routes[telnyx.Name].ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "https://sb.example.test/carriers/telnyx/webhooks", nil))
		Expect(rec.Code).To(Equal(http.StatusForbidden), "an unsigned webhook is refused")
	})
})
