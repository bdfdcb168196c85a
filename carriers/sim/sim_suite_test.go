package sim_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/carriertest"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/store"
)

// The simulated carrier's suite: the carrier conformance specs and the simulator's own, against
// a real store (SQLite, or PostgreSQL when SWITCHBOARD_TEST_DATABASE_URL is set) with its job
// workers running.
func TestSim(t *testing.T) {
	RegisterFailHandler(Fail)
	// A scheduled job (a review) starts up to 5 s after it is due: River's scheduler runs that often.
	SetDefaultEventuallyTimeout(15 * time.Second)
	RunSpecs(t, "Simulated carrier Suite")
}

// reviewDelay is how long the simulator takes to review a campaign in the suite.
const reviewDelay = 100 * time.Millisecond

// receiptGrace is how much later than its latency a receipt that the accepting process did not
// report is reported by the sweep, in the suite.
const receiptGrace = 5 * time.Second

// quiet is the suite's logger.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var (
	st      *store.Store
	reports *carriertest.Recorder
	carrier *sim.Carrier
	// simStore is the simulator's store, whose decisions the conformance specs can pause.
	simStore *pausableStore
)

// pausableStore is the simulator's store whose DecideReview waits while reviews are paused: with
// the suite's short review delay, a spec could not otherwise be sure that a review is still
// pending when its next step runs on a loaded machine.
type pausableStore struct {
	sim.Store
	paused sync.RWMutex
}

// DecideReview decides once reviews are not paused.
func (p *pausableStore) DecideReview(ctx context.Context, reference string, at time.Time) (*sim.Review, bool, error) {
	p.paused.RLock()
	defer p.paused.RUnlock()
	return p.Store.DecideReview(ctx, reference, at)
}

// pause holds every review decision until the returned function is called (once).
func (p *pausableStore) pause() (resume func()) {
	p.paused.Lock()
	return p.paused.Unlock
}

var _ = BeforeSuite(func(ctx context.Context) {
	var cleanup func()
	var err error
	st, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cleanup)
	reports = carriertest.NewRecorder()
	simStore = &pausableStore{Store: st.Sim()}
	carrier, err = sim.New(sim.Config{Store: simStore, Reporter: reports, ReviewDelay: reviewDelay, ReceiptGrace: receiptGrace,
		Logger: quiet})
	Expect(err).NotTo(HaveOccurred())
	carrier.Start()
	DeferCleanup(carrier.Close)
	workers := river.NewWorkers()
	carrier.Register(workers)
	// The workers outlive BeforeSuite, whose context ends with it.
	client, err := st.StartWorkers(context.WithoutCancel(ctx), store.WorkerConfig{Workers: workers})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) { Expect(client.Stop(ctx)).To(Succeed()) })
})

var _ = carriertest.Run(func() *carriertest.Harness {
	return &carriertest.Harness{
		Carrier: carrier,
		Reports: reports,
		Inventory: carriertest.Inventory{
			Country: "US", AreaCode: "415", TollFreePrefix: "833",
			Unknown: "+14155551234", // outside the 555-01XX block
		},
		RejectDescription: "Promotions for a product we will not name. " + sim.RejectWord,
		HoldDescription:   "Reminders that the registry looks at for a long time. " + sim.HoldWord,
		PauseReviews:      simStore.pause,
		// The handset's MMS carries media that a web server of the suite serves.
		Inbound: func(ctx SpecContext, from, to, body, contentType string, data []byte) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", contentType)
				_, _ = w.Write(data)
			}))
			DeferCleanup(srv.Close)
			_, err := carrier.Inbound(ctx, from, to, body, []carriers.Media{{URL: srv.URL + "/photo", ContentType: contentType}})
			Expect(err).NotTo(HaveOccurred())
		},
		Registered: func(ctx context.Context, reference string) bool {
			held, err := carrier.Registered(ctx, reference)
			Expect(err).NotTo(HaveOccurred())
			return held
		},
	}
})
