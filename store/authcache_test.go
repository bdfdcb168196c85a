package store_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("AuthCache", func() {
	var (
		project *store.Project
		key     *store.APIKey
		secret  string
	)
	BeforeEach(func(ctx context.Context) {
		var err error
		project, err = st.CreateProject(ctx, "auth cache")
		Expect(err).NotTo(HaveOccurred())
		key, secret, err = st.CreateAPIKey(ctx, project.ID, false)
		Expect(err).NotTo(HaveOccurred())
	})

	// newCache is a cache over s that lives as long as the spec, once it hears other instances
	// (on PostgreSQL, its listening connection starts in the background and, once in place,
	// drops every answer in case it missed something).
	newCache := func(s *store.Store, ttl time.Duration) *store.AuthCache {
		c := store.NewAuthCache(s, store.CacheConfig{TTL: ttl})
		DeferCleanup(c.Close)
		Eventually(c.Listening()).WithTimeout(10 * time.Second).Should(BeClosed())
		return c
	}
	// revokeUnannounced revokes the key behind the store's back, as a write whose announcement
	// was lost: only the TTL can make a cache see it.
	revokeUnannounced := func(ctx context.Context, id string) {
		Expect(st.DB().WithContext(ctx).Exec("UPDATE api_keys SET revoked_at = ? WHERE id = ?", time.Now().UTC(), id).Error).To(Succeed())
	}
	refused := func(c *store.AuthCache, secret string) func() error {
		return func() error { _, err := c.Authenticate(context.Background(), secret); return err }
	}

	It("answers from memory within its TTL, and from the database after it", func(ctx context.Context) {
		c := newCache(st, time.Hour)
		p, err := c.Authenticate(ctx, secret)
		Expect(err).NotTo(HaveOccurred())
		Expect(*p).To(Equal(store.Principal{KeyID: key.ID, ProjectID: project.ID}))
		p.Locked = true // the caller's own copy
		revokeUnannounced(ctx, key.ID)
		p, err = c.Authenticate(ctx, secret)
		Expect(err).NotTo(HaveOccurred(), "served from memory: the database was not asked")
		Expect(p.Locked).To(BeFalse())

		Expect(refused(newCache(st, -1), secret)()).To(MatchError(store.ErrNotFound), "a cache turned off asks every time")
	})

	It("refuses a key revoked without an announcement within 1 s (its default TTL)", func(ctx context.Context) {
		c := newCache(st, 0)
		Expect(refused(c, secret)()).To(Succeed())
		revokeUnannounced(ctx, key.ID)
		Eventually(refused(c, secret)).WithTimeout(time.Second).WithPolling(10 * time.Millisecond).Should(MatchError(store.ErrNotFound))
	})

	It("forgets a key at once when this process revokes it, inside a transaction once it commits", func(ctx context.Context) {
		c := newCache(st, time.Hour)
		Expect(refused(c, secret)()).To(Succeed())
		Expect(st.Tx(ctx, func(tx *store.Store) error {
			_, err := tx.RevokeAPIKey(ctx, key.ID)
			Expect(err).NotTo(HaveOccurred())
			return context.Canceled // rolled back: nothing changed
		})).To(MatchError(context.Canceled))
		Expect(refused(c, secret)()).To(Succeed())

		Expect(st.Tx(ctx, func(tx *store.Store) error {
			_, err := tx.RevokeAPIKey(ctx, key.ID)
			return err
		})).To(Succeed())
		Expect(refused(c, secret)()).To(MatchError(store.ErrNotFound))
	})

	It("sees at once that this process locked or unlocked the key's project", func(ctx context.Context) {
		c := newCache(st, time.Hour)
		_, other, err := st.CreateAPIKey(ctx, project.ID, true)
		Expect(err).NotTo(HaveOccurred())
		for _, s := range []string{secret, other} {
			p, err := c.Authenticate(ctx, s)
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Locked).To(BeFalse())
		}
		_, err = st.SetProjectLocked(ctx, project.ID, true)
		Expect(err).NotTo(HaveOccurred())
		for _, s := range []string{secret, other} {
			p, err := c.Authenticate(ctx, s)
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Locked).To(BeTrue())
		}
		_, err = st.SetProjectLocked(ctx, project.ID, false)
		Expect(err).NotTo(HaveOccurred())
		p, err := c.Authenticate(ctx, secret)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Locked).To(BeFalse())
	})

	It("hears another instance's revocations and locks within 1 s (PostgreSQL)", func(ctx context.Context) {
		if st.Dialect() != store.Postgres {
			Skip("SQLite serves one process: the in-process announcements are the specs above")
		}
		other, err := store.OpenAgain(ctx, st)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(other.Close)
		// An hour's TTL: within the spec, only an announcement can change an answer.
		c := newCache(other, time.Hour)

		Expect(refused(c, secret)()).To(Succeed())
		_, err = st.RevokeAPIKey(ctx, key.ID)
		Expect(err).NotTo(HaveOccurred())
		Eventually(refused(c, secret)).WithTimeout(time.Second).WithPolling(10 * time.Millisecond).Should(MatchError(store.ErrNotFound))

		_, live, err := st.CreateAPIKey(ctx, project.ID, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(refused(c, live)()).To(Succeed())
		_, err = st.SetProjectLocked(ctx, project.ID, true)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() (bool, error) {
			p, err := c.Authenticate(ctx, live)
			if err != nil {
				return false, err
			}
			return p.Locked, nil
		}).WithTimeout(time.Second).WithPolling(10 * time.Millisecond).Should(BeTrue())
	})
})
