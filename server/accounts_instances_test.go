package server_test

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/store"
)

// Issue 21: GET /accounts/{id} is answered from memory on each instance; a change made through
// one instance is seen at once on it and within 1 s on every other. (Archiving changes nothing
// the response shows: that the cache forgets an archived account is the store's spec.)
var _ = Describe("Accounts across instances", func() {
	var (
		a, b *server.Server
		t    *tenant
		id   string
	)
	// on is a tenant's calls to one instance.
	on := func(s *server.Server) *tenant {
		c := *t
		c.api = s
		return &c
	}
	within1s := func(actual any) AsyncAssertion {
		return Eventually(actual).WithTimeout(time.Second).WithPolling(10 * time.Millisecond)
	}
	// account is what instance s answers to GET /accounts/{id}.
	account := func(s *server.Server) func() map[string]any {
		return func() map[string]any {
			r := on(s).get("/accounts/" + id)
			ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK), r.String())
			return r.JSON()
		}
	}
	renamed := map[string]any{"name": "Renamed", "time_zone": "Europe/Paris",
		"quiet_hours": map[string]any{"enabled": true, "start": "09:00", "end": "20:00"}}

	Context("with announcements", func() {
		BeforeEach(func(ctx context.Context) {
			// An hour's TTL: within a spec, only the announcement of a change can reach
			// instance B in time (the default TTL's bound has a spec below and in the store's).
			a = newAPI(server.Config{RateLimit: -1, AccountCacheTTL: time.Hour})
			b = newAPI(server.Config{RateLimit: -1, AccountCacheTTL: time.Hour, Core: otherInstance(ctx)})
			t = newTenant()
			t.api = a
			id = t.createAccount("Before")
			awaitAnnouncements(ctx, b)
			// Both instances remember the account as it is.
			Expect(account(a)()).To(HaveKeyWithValue("name", "Before"))
			Expect(account(b)()).To(HaveKeyWithValue("name", "Before"))
		})

		It("shows a PATCH through instance A on A at once and on B within 1 s", func() {
			r := on(a).patch("/accounts/"+id, renamed)
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			want := r.JSON()
			Expect(want).To(SatisfyAll(HaveKeyWithValue("name", "Renamed"), HaveKeyWithValue("time_zone", "Europe/Paris")))
			Expect(account(a)()).To(Equal(want), "instance A itself at once")
			within1s(account(b)).Should(Equal(want))
		})

		It("shows a change made through the store (the command line's path) on both within 1 s", func(ctx context.Context) {
			_, err := st.UpdateAccount(ctx, t.ProjectID, id, store.AccountPatch{}, func(a *store.Account) error {
				a.QuietHours = true
				return nil
			})
			Expect(err).NotTo(HaveOccurred())
			for _, s := range []*server.Server{a, b} {
				within1s(account(s)).Should(HaveKeyWithValue("quiet_hours", HaveKeyWithValue("enabled", true)))
			}
		})
	})

	It("shows on B a change whose announcement was lost within 1 s (the default TTL)", func(ctx context.Context) {
		b = newAPI(server.Config{RateLimit: -1, Core: otherInstance(ctx)})
		t = newTenant()
		t.api = b
		id = t.createAccount("Before")
		Expect(account(b)()).To(HaveKeyWithValue("name", "Before"))
		// Behind the store's back: no announcement.
		Expect(st.DB().WithContext(ctx).Exec("UPDATE accounts SET name = ? WHERE id = ?", "Unannounced", id).Error).To(Succeed())
		within1s(account(b)).Should(HaveKeyWithValue("name", "Unannounced"))
	})
})
