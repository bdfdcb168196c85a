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

var _ = Describe("The collation of keys", func() {
	It("is C for every text column of an index or a foreign key of the store's tables on PostgreSQL", func(ctx context.Context) {
		if st.Dialect() != store.Postgres {
			Skip("PostgreSQL only: SQLite compares text by its bytes")
		}
		// A key in the database's collation (C.UTF-8, en_US.UTF-8) is compared through strcoll at
		// every insert into its indexes, and a comparison between it and a key in "C" is made in
		// "C", which its index cannot serve (migration 0034). The job queue's tables are River's.
		var mixed []string
		Expect(st.DB().Raw(`SELECT DISTINCT c.relname || '.' || a.attname FROM pg_attribute a
				JOIN pg_class c ON c.oid = a.attrelid
				JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
			WHERE c.relkind = 'r' AND c.relname NOT LIKE 'river%' AND a.attnum > 0 AND NOT a.attisdropped
				AND a.atttypid = 'text'::regtype AND a.attcollation <> (SELECT oid FROM pg_collation WHERE collname = 'C')
				AND (EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND a.attnum = ANY (i.indkey::int2[]))
					OR EXISTS (SELECT 1 FROM pg_constraint k WHERE k.contype = 'f'
						AND (k.conrelid = c.oid AND a.attnum = ANY (k.conkey) OR k.confrelid = c.oid AND a.attnum = ANY (k.confkey))))
			ORDER BY 1`).Scan(&mixed).Error).To(Succeed())
		Expect(mixed).To(BeEmpty(), "give these COLLATE \"C\" in their migration")
	})
})
