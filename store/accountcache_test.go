package store_test

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("AccountCache", func() {
	var (
		project *store.Project
		account *store.Account
	)
	BeforeEach(func(ctx context.Context) {
		var err error
		project, err = st.CreateProject(ctx, "account cache")
		Expect(err).NotTo(HaveOccurred())
		brand := "Brand"
		account = &store.Account{ProjectID: project.ID, Name: "Before", BrandName: &brand}
		Expect(st.CreateAccount(ctx, account)).To(Succeed())
	})

	// newCache is a cache over s that lives as long as the spec, once it hears other instances
	// (on PostgreSQL, its listening connection starts in the background and, once in place,
	// drops every answer in case it missed something).
	newCache := func(s *store.Store, ttl time.Duration) *store.AccountCache {
		c := store.NewAccountCache(s, store.CacheConfig{TTL: ttl})
		DeferCleanup(c.Close)
		Eventually(c.Listening()).WithTimeout(10 * time.Second).Should(BeClosed())
		return c
	}
	// renameUnannounced renames the account behind the store's back, as a write whose
	// announcement was lost: only the TTL can make a cache see it.
	renameUnannounced := func(ctx context.Context, name string) {
		Expect(st.DB().WithContext(ctx).Exec("UPDATE accounts SET name = ? WHERE id = ?", name, account.ID).Error).To(Succeed())
	}
	name := func(c *store.AccountCache) func() (string, error) {
		return func() (string, error) {
			a, err := c.GetAccount(context.Background(), project.ID, account.ID)
			if err != nil {
				return "", err
			}
			return a.Name, nil
		}
	}
	rename := func(ctx context.Context, s *store.Store, to string) {
		_, err := s.UpdateAccount(ctx, project.ID, account.ID, store.AccountPatch{Name: &to}, nil)
		Expect(err).NotTo(HaveOccurred())
	}
	archived := func(c *store.AccountCache) func() (bool, error) {
		return func() (bool, error) {
			a, err := c.GetAccount(context.Background(), project.ID, account.ID)
			if err != nil {
				return false, err
			}
			return a.ArchivedAt != nil, nil
		}
	}

	It("answers as Store.GetAccount does, from memory within its TTL and from the database after it", func(ctx context.Context) {
		c := newCache(st, time.Hour)
		want, err := st.GetAccount(ctx, project.ID, account.ID)
		Expect(err).NotTo(HaveOccurred())
		a, err := c.GetAccount(ctx, project.ID, account.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(a).To(Equal(want))

		a.Name, *a.BrandName = "the caller's own copy", "changed"
		a, err = c.GetAccount(ctx, project.ID, account.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(a).To(Equal(want), "the caller's changes to its copy are its own")
		renameUnannounced(ctx, "After")
		Expect(name(c)()).To(Equal("Before"), "served from memory: the database was not asked")
		Expect(name(newCache(st, -1))()).To(Equal("After"), "a cache turned off asks every time")
	})

	It("refuses another project's account and an unknown one with Store.GetAccount's errors", func(ctx context.Context) {
		c := newCache(st, time.Hour)
		other, err := st.CreateProject(ctx, "another")
		Expect(err).NotTo(HaveOccurred())
		Expect(name(c)()).To(Equal("Before")) // remembered
		for _, q := range [][2]string{{other.ID, account.ID}, {project.ID, "acct_unknown"}} {
			_, want := st.GetAccount(ctx, q[0], q[1])
			Expect(want).To(MatchError(store.ErrNotFound))
			_, got := c.GetAccount(ctx, q[0], q[1])
			Expect(got).To(MatchError(want.Error()))
			Expect(errors.Is(got, store.ErrNotFound)).To(BeTrue())
		}
	})

	It("sees an account changed without an announcement within 1 s (its default TTL)", func(ctx context.Context) {
		c := newCache(st, 0)
		Expect(name(c)()).To(Equal("Before"))
		renameUnannounced(ctx, "After")
		Eventually(name(c)).WithTimeout(time.Second).WithPolling(10 * time.Millisecond).Should(Equal("After"))
	})

	It("forgets an account at once when this process changes or archives it, inside a transaction once it commits", func(ctx context.Context) {
		c := newCache(st, time.Hour)
		Expect(name(c)()).To(Equal("Before"))
		Expect(st.Tx(ctx, func(tx *store.Store) error {
			rename(ctx, tx, "Rolled back")
			Expect(name(c)()).To(Equal("Before"), "not committed yet")
			return context.Canceled
		})).To(MatchError(context.Canceled))
		Expect(name(c)()).To(Equal("Before"))

		rename(ctx, st, "After")
		Expect(name(c)()).To(Equal("After"))

		Expect(archived(c)()).To(BeFalse())
		_, err := st.ArchiveAccount(ctx, project.ID, account.ID, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(archived(c)()).To(BeTrue())
	})

	It("hears another instance's changes and archiving within 1 s (PostgreSQL)", func(ctx context.Context) {
		if st.Dialect() != store.Postgres {
			Skip("SQLite serves one process: the in-process announcements are the specs above")
		}
		other, err := store.OpenAgain(ctx, st)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(other.Close)
		// An hour's TTL: within the spec, only an announcement can change an answer.
		c := newCache(other, time.Hour)
		within1s := func(actual any) AsyncAssertion {
			return Eventually(actual).WithTimeout(time.Second).WithPolling(10 * time.Millisecond)
		}

		Expect(name(c)()).To(Equal("Before"))
		rename(ctx, st, "After")
		within1s(name(c)).Should(Equal("After"))

		Expect(archived(c)()).To(BeFalse())
		_, err = st.ArchiveAccount(ctx, project.ID, account.ID, nil)
		Expect(err).NotTo(HaveOccurred())
		within1s(archived(c)).Should(BeTrue())
	})
})
