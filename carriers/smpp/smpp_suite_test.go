package smpp_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/carriertest"
	"github.com/switchboard/switchboard/carriers/smpp"
	"github.com/switchboard/switchboard/carriers/smpp/smsctest"
	"github.com/switchboard/switchboard/store"
)

// The SMPP adapter's suite: the carrier conformance specs and the adapter's own, against the fake
// SMSC of smsctest over loopback TCP and a real store (SQLite, or PostgreSQL when
// SWITCHBOARD_TEST_DATABASE_URL is set).
func TestSMPP(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(10 * time.Second)
	RunSpecs(t, "SMPP carrier Suite")
}

var (
	st      *store.Store
	reports *carriertest.Recorder
	smsc    *smsctest.SMSC
	carrier *smpp.Carrier
	// outcomes chooses the receipt of a part by its destination (see outcome).
	outcomes sync.Map
)

// outcome is what the suite's SMSC answers for a destination: the stat and err of each part's
// receipt by part number (0: every part), "" for no receipt.
type outcome map[int][2]string

// withOutcome makes the suite's SMSC answer parts to a destination so for the rest of the spec.
func withOutcome(to string, o outcome) {
	outcomes.Store(to, o)
	DeferCleanup(func() { outcomes.Delete(to) })
}

func testLogger() *slog.Logger {
	if os.Getenv("SWITCHBOARD_TEST_LOGS") != "" {
		return slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startSMSC starts a fake SMSC for one spec (or the suite) that answers by the outcomes.
func startSMSC(cfg smsctest.Config) *smsctest.SMSC {
	if cfg.Outcome == nil {
		cfg.Outcome = func(p smsctest.Part) (string, string) {
			if o, ok := outcomes.Load(p.To); ok {
				if r, ok := o.(outcome)[p.Seq]; ok {
					return r[0], r[1]
				}
				if r, ok := o.(outcome)[0]; ok {
					return r[0], r[1]
				}
			}
			return "DELIVRD", "000"
		}
	}
	s, err := smsctest.Start(cfg)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(s.Close)
	return s
}

// newCarrier builds and starts an adapter bound to s that reports to rep.
func newCarrier(s *smsctest.SMSC, rep carriers.Reporter, tune func(*smpp.Config)) *smpp.Carrier {
	cfg := smpp.Config{Addr: s.Addr(), SystemID: "test", Password: "secret", Store: st.SMPP(), Reporter: rep,
		EnquireLink: time.Second, ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond,
		SubmitTimeout: 10 * time.Second, Logger: testLogger()}
	if tune != nil {
		tune(&cfg)
	}
	c, err := smpp.New(cfg)
	Expect(err).NotTo(HaveOccurred())
	c.Start()
	DeferCleanup(c.Close)
	Eventually(c.Bound).Should(BeTrue())
	return c
}

var _ = BeforeSuite(func(ctx context.Context) {
	var cleanup func()
	var err error
	st, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cleanup)
	reports = carriertest.NewRecorder()
	smsc = startSMSC(smsctest.Config{})
	carrier = newCarrier(smsc, reports, nil)
	// The route's inventory: +1 415 555 01XX and +1 833 555 01XX.
	var pool []smpp.PoolNumber
	for i := range 100 {
		for _, prefix := range []string{"415", "833"} {
			n, err := smpp.PoolNumberOf(fmt.Sprintf("+1%s55501%02d", prefix, i), time.Now())
			Expect(err).NotTo(HaveOccurred())
			pool = append(pool, n)
		}
	}
	Expect(st.SMPP().AddPoolNumbers(ctx, pool)).To(Succeed())
})

var _ = carriertest.Run(func() *carriertest.Harness {
	return &carriertest.Harness{Carrier: carrier, Reports: reports,
		Inventory: carriertest.Inventory{Country: "US", AreaCode: "415", TollFreePrefix: "833", Unknown: "+14155551234"},
		// SMPP registers nothing: its registry only imports campaigns registered with the SMSC's
		// operator, and verifies the route's own toll-free numbers.
		Unsupported: []carriertest.Operation{carriertest.Registration, carriertest.Withdrawal}}
})
