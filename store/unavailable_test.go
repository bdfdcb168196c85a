package store_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/glebarez/sqlite"
	"github.com/jackc/pgx/v5/pgconn"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("Unavailable", func() {
	DescribeTable("tells a database that cannot be reached right now from a real failure",
		func(err error, unavailable bool) {
			Expect(store.Unavailable(err)).To(Equal(unavailable))
			Expect(store.Unavailable(fmt.Errorf("service: wrapped: %w", err))).To(Equal(unavailable))
		},
		Entry("connection failure (08006)", &pgconn.PgError{Code: "08006"}, true),
		Entry("cannot establish a connection (08001)", &pgconn.PgError{Code: "08001"}, true),
		Entry("admin shutdown, pg_terminate_backend (57P01)", &pgconn.PgError{Code: "57P01"}, true),
		Entry("crash shutdown (57P02)", &pgconn.PgError{Code: "57P02"}, true),
		Entry("the database system is starting up (57P03)", &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, true),
		Entry("too many connections (53300)", &pgconn.PgError{Code: "53300"}, true),
		Entry("a bad connection", driver.ErrBadConn, true),
		Entry("a finished connection", sql.ErrConnDone, true),
		Entry("connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true),
		Entry("connection reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true),
		Entry("an answer cut off", io.ErrUnexpectedEOF, true),
		Entry("the sentinel", store.ErrUnavailable, true),
		Entry("a unique violation (23505)", &pgconn.PgError{Code: "23505"}, false),
		Entry("an undefined table (42P01)", &pgconn.PgError{Code: "42P01"}, false),
		Entry("a serialization failure (40001)", &pgconn.PgError{Code: "40001"}, false),
		Entry("not found", store.ErrNotFound, false),
		Entry("gorm's not found", gorm.ErrRecordNotFound, false),
		Entry("a canceled request", context.Canceled, false),
		Entry("any other error", errors.New("boom"), false),
		Entry("nothing", nil, false),
	)

	It("knows SQLite's busy database", func() {
		dsn := "file:" + filepath.Join(GinkgoT().TempDir(), "busy.db") + "?_pragma=busy_timeout(0)"
		open := func() *sql.DB {
			db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{})
			Expect(err).NotTo(HaveOccurred())
			sqlDB, err := db.DB()
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(sqlDB.Close)
			return sqlDB
		}
		holder, other := open(), open()
		_, err := holder.Exec("CREATE TABLE t (x int)")
		Expect(err).NotTo(HaveOccurred())
		tx, err := holder.Begin()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(tx.Rollback)
		_, err = tx.Exec("INSERT INTO t VALUES (1)")
		Expect(err).NotTo(HaveOccurred())
		_, err = other.Exec("INSERT INTO t VALUES (2)")
		Expect(err).To(HaveOccurred())
		Expect(store.Unavailable(err)).To(BeTrue(), "%v", err)
	})

	It("knows a PostgreSQL server that does not answer", func(ctx context.Context) {
		if st.Dialect() != store.Postgres {
			Skip("PostgreSQL only")
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		closed := ln.Addr().String()
		Expect(ln.Close()).To(Succeed())
		_, err = store.Open(ctx, store.Config{URL: "postgres://postgres:postgres@" + closed + "/postgres?sslmode=disable&connect_timeout=5"})
		Expect(err).To(HaveOccurred())
		Expect(store.Unavailable(err)).To(BeTrue(), "%v", err)
	})
})
