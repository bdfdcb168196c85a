package twilio_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers/carriertest"
	"github.com/switchboard/switchboard/carriers/twilio"
	"github.com/switchboard/switchboard/carriers/twilio/twiliotest"
	"github.com/switchboard/switchboard/store"
)

// The Twilio adapter's suite: the carrier conformance specs and the adapter's own, against a fake
// Twilio that checks every request's wire format, with a real store (SQLite, or PostgreSQL when
// SWITCHBOARD_TEST_DATABASE_URL is set) and the adapter's job workers running.
func TestTwilio(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(15 * time.Second)
	RunSpecs(t, "Twilio carrier Suite")
}

// publicURL is the installation's public URL in the suite.
const publicURL = "https://switchboard.test"

// tollFreeNumber is the account's toll-free number that the conformance specs verify.
const tollFreeNumber = "+18335550199"

var (
	st      *store.Store
	reports *carriertest.Recorder
	carrier *twilio.Carrier
	fake    *twiliotest.Fake
)

var _ = BeforeSuite(func(ctx context.Context) {
	var cleanup func()
	var err error
	st, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cleanup)
	fake = twiliotest.New()
	DeferCleanup(fake.Close)
	reports = carriertest.NewRecorder()
	carrier, err = twilio.New(twilio.Config{AccountSID: twiliotest.AccountSID, AuthToken: twiliotest.AuthToken, APIBase: fake.URL,
		MessagingAPIBase: fake.URL, TrustHubAPIBase: fake.URL, PublicURL: publicURL, Store: st.Twilio(), Reporter: reports,
		PollMin: 20 * time.Millisecond, PollMax: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	Expect(err).NotTo(HaveOccurred())
	// The toll-free number the conformance specs verify is the account's.
	Expect(carrier.ProvisionNumber(ctx, tollFreeNumber)).To(Succeed())
	fake.Callbacks = carrier.Handler()
	workers := river.NewWorkers()
	carrier.Register(workers)
	// The workers outlive BeforeSuite, whose context ends with it.
	client, err := st.StartWorkers(context.WithoutCancel(ctx), store.WorkerConfig{Workers: workers, PollInterval: 50 * time.Millisecond})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) { Expect(client.Stop(ctx)).To(Succeed()) })
})

// Every request the adapter sent in a spec kept to Twilio's wire format.
var _ = AfterEach(func() {
	Expect(fake.Violations()).To(BeEmpty())
})

var _ = carriertest.Run(func() *carriertest.Harness {
	return &carriertest.Harness{
		Carrier: carrier,
		Reports: reports,
		Inventory: carriertest.Inventory{
			Country: "US", AreaCode: "415", TollFreePrefix: "833",
			Unknown: "+14155551234", // outside the fake's 555-01XX block
		},
		RejectDescription: "Promotions for a product we will not name. " + twiliotest.RejectWord,
		HoldDescription:   "Reminders that Twilio looks at for a long time. " + twiliotest.HoldWord,
		TollFreeNumber:    tollFreeNumber,
		Registered:        registeredAtTwilio,
		Inbound: func(_ SpecContext, from, to, body, contentType string, data []byte) {
			cb := fake.InboundMMS(publicURL+twilio.CallbackPath+"/messages/inbound", from, to, body,
				twiliotest.File{ContentType: contentType, Data: data})
			Expect(cb.Status).To(Equal(http.StatusOK))
		},
		// Twilio imports no campaign registered elsewhere by its TCR id.
		Unsupported: []carriertest.Operation{carriertest.Import},
	}
})

// sids remembers Twilio's sid of each registration the specs looked at, to look for it at the
// fake after the adapter forgot it (a withdrawal).
var sids sync.Map

// registeredAtTwilio tells whether the fake holds the registration made for reference.
func registeredAtTwilio(ctx context.Context, reference string) bool {
	sid, err := carrier.RegistrationSID(ctx, reference)
	Expect(err).NotTo(HaveOccurred())
	if sid != "" {
		sids.Store(reference, sid)
	} else if known, ok := sids.Load(reference); ok {
		sid = known.(string)
	}
	return sid != "" && fake.Registered(sid)
}
