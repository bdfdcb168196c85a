package server_test

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// Issue 21: API keys are answered from memory on each instance, and a revocation or a lock made
// through one instance is refused by every other within 1 s.
var _ = Describe("Authentication across instances", func() {
	var (
		a, b  *server.Server
		t     *tenant
		owner *consoleClient
	)
	BeforeEach(func(ctx context.Context) {
		// An hour's TTL: within a spec, only the announcement of a change can reach instance B
		// in time (the default TTL's bound has a spec of its own in the store's suite).
		a = newAPI(server.Config{RateLimit: -1, AuthCacheTTL: time.Hour})
		b = newAPI(server.Config{RateLimit: -1, AuthCacheTTL: time.Hour, Core: otherInstance(ctx)})
		t = newTenant()
		owner = newConsoleClient()
		owner.api = a
		Expect(owner.login(newConsoleUser(t.ProjectID, store.RoleOwner), consolePassword, "")).To(HaveStatus(http.StatusOK))
		awaitAnnouncements(ctx, b)
	})
	// on is a tenant's calls to one instance.
	on := func(s *server.Server, t *tenant) *tenant {
		c := *t
		c.api = s
		return &c
	}
	onB := func(t *tenant) *tenant { return on(b, t) }
	within1s := func(actual any) AsyncAssertion {
		return Eventually(actual).WithTimeout(time.Second).WithPolling(10 * time.Millisecond)
	}

	It("refuses on instance B within 1 s a key revoked through instance A's console", func() {
		Expect(onB(t).get("/accounts")).To(HaveStatus(http.StatusOK))
		Expect(owner.post("/projects/"+t.ProjectID+"/keys/"+t.KeyID+"/revoke", nil)).To(HaveStatus(http.StatusOK))
		within1s(func() *response { return onB(t).get("/accounts") }).Should(HaveError(http.StatusUnauthorized, "invalid_api_key"))
	})

	It("refuses on instance B within 1 s the keys of a project locked through instance A's console, and takes them again once unlocked", func() {
		Expect(onB(t).get("/accounts")).To(HaveStatus(http.StatusOK))
		Expect(on(a, t).get("/accounts")).To(HaveStatus(http.StatusOK))
		Expect(owner.post("/projects/"+t.ProjectID+"/lock", nil)).To(HaveStatus(http.StatusOK))
		within1s(func() *response { return onB(t).get("/accounts") }).Should(HaveError(http.StatusForbidden, "platform_locked"))
		Expect(on(a, t).get("/accounts")).To(HaveError(http.StatusForbidden, "platform_locked"), "instance A itself at once")

		Expect(owner.post("/projects/"+t.ProjectID+"/unlock", nil)).To(HaveStatus(http.StatusOK))
		within1s(func() *response { return onB(t).get("/accounts") }).Should(HaveStatus(http.StatusOK))
	})

	It("refuses on instance B within 1 s a key revoked through the service layer (the command line's path)", func(ctx context.Context) {
		Expect(onB(t).get("/accounts")).To(HaveStatus(http.StatusOK))
		_, err := core.Operator.RevokeKey(ctx, service.CLIActor("spec"), "", t.KeyID)
		Expect(err).NotTo(HaveOccurred())
		within1s(func() *response { return onB(t).get("/accounts") }).Should(HaveError(http.StatusUnauthorized, "invalid_api_key"))
	})
})

// otherInstance is the domain of a second instance of the server on the suite's database: on
// PostgreSQL its own store handle (connections, listening connection), as another process has;
// on SQLite, which one process serves, the suite's own.
func otherInstance(ctx context.Context) *service.Core {
	if st.Dialect() != store.Postgres {
		return core
	}
	other, err := store.OpenAgain(ctx, st)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	DeferCleanup(other.Close)
	c, err := service.NewCore(service.CoreConfig{
		Store: other, PublicURL: "https://switchboard.test", Now: clock.Now, Logger: testLogger(),
		Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
			c, err := sim.New(sim.Config{Store: other.Sim(), Reporter: r, Now: clock.Now, Logger: testLogger()})
			return []carriers.Carrier{c}, err
		},
	})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return c
}

// awaitAnnouncements waits until instance s hears the changes other instances make (its
// listening connection starts in the background): a probe project's lock must reach it.
func awaitAnnouncements(ctx context.Context, s *server.Server) {
	probe := newTenant()
	probe.api = s
	ExpectWithOffset(1, probe.get("/accounts")).To(HaveStatus(http.StatusOK))
	_, err := st.SetProjectLocked(ctx, probe.ProjectID, true)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	EventuallyWithOffset(1, func() int { return probe.get("/accounts").Status }).WithTimeout(10 * time.Second).Should(Equal(http.StatusForbidden))
}
