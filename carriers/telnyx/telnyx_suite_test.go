package telnyx_test

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

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/carriertest"
	"github.com/switchboard/switchboard/carriers/telnyx"
	"github.com/switchboard/switchboard/carriers/telnyx/telnyxtest"
	"github.com/switchboard/switchboard/store"
)

// The Telnyx adapter's suite: the carrier conformance specs and the adapter's own, against a fake
// Telnyx that checks every request, with a real store (SQLite, or PostgreSQL when
// SWITCHBOARD_TEST_DATABASE_URL is set) and the adapter's job workers running.
func TestTelnyx(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(15 * time.Second)
	RunSpecs(t, "Telnyx carrier Suite")
}

// publicURL is the installation's public URL in the suite; webhookURL the adapter's webhooks.
const (
	publicURL      = "https://switchboard.test"
	webhookURL     = publicURL + telnyx.CallbackPath + "/webhooks"
	tollFreeNumber = "+18335550199"
	// sender is a number of the account's that the Messenger specs send from.
	sender = "+14155550199"
)

var (
	st      *store.Store
	reports *carriertest.Recorder
	carrier *telnyx.Carrier
	fake    *telnyxtest.Fake
)

var _ = BeforeSuite(func(ctx context.Context) {
	var cleanup func()
	var err error
	st, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cleanup)
	fake = telnyxtest.New()
	DeferCleanup(fake.Close)
	reports = carriertest.NewRecorder()
	carrier, err = telnyx.New(telnyx.Config{APIKey: telnyxtest.APIKey, PublicKey: fake.PublicKey,
		MessagingProfileID: telnyxtest.MessagingProfileID, APIBase: fake.URL, PublicURL: publicURL, Store: st.Telnyx(), Reporter: reports,
		PollMin: 20 * time.Millisecond, PollMax: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	Expect(err).NotTo(HaveOccurred())
	fake.Webhooks = carrier.Handler()
	workers := river.NewWorkers()
	carrier.Register(workers)
	client, err := st.StartWorkers(context.WithoutCancel(ctx), store.WorkerConfig{Workers: workers, PollInterval: 50 * time.Millisecond})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) { Expect(client.Stop(ctx)).To(Succeed()) })
	for _, n := range []string{tollFreeNumber, sender} {
		Expect(carrier.ProvisionNumber(ctx, n)).To(Succeed())
	}
})

// Every request the adapter sent in a spec kept to Telnyx's wire format.
var _ = AfterEach(func() { Expect(fake.Violations()).To(BeEmpty()) })

var _ = carriertest.Run(func() *carriertest.Harness {
	return &carriertest.Harness{
		Carrier: carrier, Reports: reports,
		Inventory: carriertest.Inventory{Country: "US", AreaCode: "415", TollFreePrefix: "833",
			Unknown: "+14155551234"}, // outside the fake's 555-01XX block
		Messaging:         carriertest.Messaging{From: sender},
		RejectDescription: "Promotions for a product we will not name. " + telnyxtest.RejectWord,
		HoldDescription:   "Reminders that Telnyx looks at for a long time. " + telnyxtest.HoldWord,
		TollFreeNumber:    tollFreeNumber,
		Registered:        registeredAtTelnyx,
		Inbound: func(_ SpecContext, from, to, body, contentType string, data []byte) {
			status, _, _ := fake.Inbound(webhookURL, from, to, body, telnyxtest.File{ContentType: contentType, Data: data})
			Expect(status).To(Equal(http.StatusOK))
		},
		// Telnyx imports no campaign registered elsewhere by its TCR id through this adapter.
		Unsupported: []carriertest.Operation{carriertest.Import},
	}
})

// ids remembers Telnyx's id of each registration the specs looked at, to look for it at the fake
// after the adapter forgot it (a withdrawal).
var ids sync.Map

func registeredAtTelnyx(ctx context.Context, reference string) bool {
	id, err := carrier.RegistrationID(ctx, reference)
	Expect(err).NotTo(HaveOccurred())
	if id != "" {
		ids.Store(reference, id)
	} else if known, ok := ids.Load(reference); ok {
		id = known.(string)
	}
	return id != "" && fake.Registered(id)
}

// campaign is a complete campaign submission of a fresh account.
func campaign() carriers.CampaignSubmission {
	return carriertest.Campaign("Acme Dental sends appointment reminders to patients who opted in at the front desk.")
}
