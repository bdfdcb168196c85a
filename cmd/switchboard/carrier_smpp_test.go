package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/carriers/smpp"
)

var _ = Describe("SWITCHBOARD_CARRIER=smpp", func() {
	var c *cli
	BeforeEach(func() {
		c = newCLI()
		setenv("SWITCHBOARD_CARRIER", "smpp")
	})
	const password = "pw-s3cr"

	DescribeTable("serve refuses a missing or malformed SMPP setting, naming it and never the password",
		func(setting string, env map[string]string) {
			setenv("SWITCHBOARD_SMPP_PASSWORD", password)
			for k, v := range env {
				setenv(k, v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var stderr bytes.Buffer
			err := run(ctx, []string{"serve", "--data-dir", c.dataDir, "--listen", "127.0.0.1:0"}, io.Discard, &stderr)
			Expect(err).To(MatchError(ContainSubstring(setting)))
			Expect(err.Error() + stderr.String()).NotTo(ContainSubstring(password))
			Expect(c.dbPath()).NotTo(BeAnExistingFile(), "nothing started")
		},
		Entry("no address", "SWITCHBOARD_SMPP_ADDR", map[string]string{"SWITCHBOARD_SMPP_SYSTEM_ID": "acme"}),
		Entry("an address without a port", "SWITCHBOARD_SMPP_ADDR", map[string]string{"SWITCHBOARD_SMPP_ADDR": "smsc.example", "SWITCHBOARD_SMPP_SYSTEM_ID": "acme"}),
		Entry("no system id", "SWITCHBOARD_SMPP_SYSTEM_ID", map[string]string{"SWITCHBOARD_SMPP_ADDR": "smsc.example:2775"}),
		Entry("a password longer than SMPP allows", "SWITCHBOARD_SMPP_PASSWORD",
			map[string]string{"SWITCHBOARD_SMPP_ADDR": "smsc.example:2775", "SWITCHBOARD_SMPP_SYSTEM_ID": "acme", "SWITCHBOARD_SMPP_PASSWORD": "much-too-long"}),
		Entry("a window of 0", "SWITCHBOARD_SMPP_WINDOW",
			map[string]string{"SWITCHBOARD_SMPP_ADDR": "smsc.example:2775", "SWITCHBOARD_SMPP_SYSTEM_ID": "acme", "SWITCHBOARD_SMPP_WINDOW": "0"}),
		Entry("a negative throughput", "SWITCHBOARD_SMPP_THROUGHPUT",
			map[string]string{"SWITCHBOARD_SMPP_ADDR": "smsc.example:2775", "SWITCHBOARD_SMPP_SYSTEM_ID": "acme", "SWITCHBOARD_SMPP_THROUGHPUT": "-1"}),
	)

	It("makes SMPP the default carrier and keeps the simulator for numbers it provides", func() {
		setenv("SWITCHBOARD_SMPP_ADDR", "127.0.0.1:1")
		setenv("SWITCHBOARD_SMPP_SYSTEM_ID", "acme")
		_, err := c.run("migrate")
		Expect(err).NotTo(HaveOccurred())
		cfg := &Config{Carrier: "smpp", PublicURL: "https://sb.example.test", SimReviewDelay: time.Second,
			SMPP: SMPPConfig{Addr: "127.0.0.1:1", SystemID: "acme", Password: password, Window: 10}}
		core, _, err := buildCore(cfg, c.openStore(), slog.New(slog.NewTextHandler(io.Discard, nil)))
		Expect(err).NotTo(HaveOccurred())
		Expect(core.Carriers.Default().Name()).To(Equal(smpp.Name))
		_, err = core.Carriers.Get(sim.Name)
		Expect(err).NotTo(HaveOccurred())
		stop := startCarriers(core)
		stop() // an SMSC that is not there does not keep serve from stopping
	})
})
