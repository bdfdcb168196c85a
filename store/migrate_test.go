package store_test

import (
	"context"
	"crypto/rand"
	"net/url"
	"os"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("Migrations of instances that start together", func() {
	It("apply once on a fresh PostgreSQL database, the job queue's included", func(ctx context.Context) {
		admin := os.Getenv(store.TestDatabaseEnv)
		if admin == "" {
			Skip("PostgreSQL only: SQLite has one writer")
		}
		adm, err := store.Open(ctx, store.Config{URL: admin, MaxOpenConns: 1})
		Expect(err).NotTo(HaveOccurred())
		name := "sbmig_" + strings.ToLower(rand.Text()[:10])
		Expect(adm.DB().Exec("CREATE DATABASE " + name).Error).To(Succeed())
		DeferCleanup(func() {
			_ = adm.DB().Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error
			_ = adm.Close()
		})
		u, err := url.Parse(admin)
		Expect(err).NotTo(HaveOccurred())
		u.Path = "/" + name

		const instances = 4
		var wg sync.WaitGroup
		var pending int
		errs := make([]error, instances)
		applied := make([]int, instances)
		for i := range instances {
			st, err := store.Open(ctx, store.Config{URL: u.String()})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(st.Close)
			if i == 0 {
				pending, err = st.PendingMigrations(ctx) // every one: versions may leave gaps
				Expect(err).NotTo(HaveOccurred())
			}
			wg.Go(func() {
				ms, err := st.Migrate(ctx)
				errs[i], applied[i] = err, len(ms)
			})
		}
		wg.Wait()
		total := 0
		for i := range instances {
			Expect(errs[i]).NotTo(HaveOccurred(), "instance %d", i)
			total += applied[i]
		}
		Expect(pending).To(BeNumerically(">=", 20))
		Expect(total).To(Equal(pending), "every migration applied once, by one of them")
	})
})
