package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/switchboard/switchboard/store"
)

type rowArgs struct {
	N int `json:"n"`
}

func (rowArgs) Kind() string { return "store_test_row" }

// rowOptsArgs has options of its own, and a kind no other spec reads.
type rowOptsArgs struct {
	N int `json:"n"`
}

func (rowOptsArgs) Kind() string { return "store_test_row_opts" }

func (rowOptsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: "store_test", Priority: 2}
}

// River owns river_job; the store writes it with SQL of its own where River's insert costs too
// much (river.go). These specs hold every such write against River's own client on the same
// database: a River upgrade that changes what its insert writes (a new column, another default,
// another encoding) fails here rather than in production.
var _ = Describe("Writes into River's table", func() {
	var (
		db *sql.DB
		rc *river.Client[*sql.Tx]
	)
	BeforeEach(func() {
		var err error
		db, err = st.DB().DB()
		Expect(err).NotTo(HaveOccurred())
		// River's own client, insert-only, on the same database: not the store's.
		if st.Dialect() == store.Postgres {
			rc, err = river.NewClient(riverdatabasesql.New(db), &river.Config{})
		} else {
			rc, err = river.NewClient(riversqlite.New(db), &river.Config{})
		}
		Expect(err).NotTo(HaveOccurred())
	})

	// riverInsert inserts a job with River's own client in a transaction of its own.
	riverInsert := func(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) int64 {
		tx, err := db.BeginTx(ctx, nil)
		Expect(err).NotTo(HaveOccurred())
		res, err := rc.InsertTx(ctx, tx, args, opts)
		Expect(err).NotTo(HaveOccurred())
		Expect(tx.Commit()).To(Succeed())
		return res.Job.ID
	}
	// jobRow reads a job's whole row, every column River has, as the database returns it.
	jobRow := func(ctx context.Context, id int64) map[string]any {
		rows, err := db.QueryContext(ctx, "SELECT * FROM river_job WHERE id = "+fmt.Sprint(id))
		Expect(err).NotTo(HaveOccurred())
		defer rows.Close()
		cols, err := rows.Columns()
		Expect(err).NotTo(HaveOccurred())
		Expect(rows.Next()).To(BeTrue(), "job %d", id)
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		Expect(rows.Scan(ptrs...)).To(Succeed())
		out := map[string]any{}
		for i, c := range cols {
			if b, ok := vals[i].([]byte); ok {
				vals[i] = string(b)
			}
			out[c] = vals[i]
		}
		return out
	}
	// expectSameRow compares the rows column by column: the same columns, the same values, but
	// for the id and the creation time, and the scheduled time within the moment between the
	// inserts when the job did not set it.
	expectSameRow := func(ours, theirs map[string]any) {
		Expect(ours).To(HaveLen(len(theirs)), "River's table has columns this spec does not know")
		for col, want := range theirs {
			Expect(ours).To(HaveKey(col))
			got := ours[col]
			switch col {
			case "id", "created_at":
				continue
			case "metadata":
				// River's SQLite driver marks a single insert with a random nonce, to tell an
				// insert from a skipped duplicate; the rest of the metadata must be the same.
				Expect(withoutNonce(got)).To(MatchJSON(withoutNonce(want)), "metadata")
				continue
			case "scheduled_at":
				Expect(asTime(got)).To(BeTemporally("~", asTime(want), 5*time.Second), "scheduled_at")
				continue
			}
			if want == nil {
				Expect(got).To(BeNil(), "column %s", col)
			} else {
				Expect(got).To(Equal(want), "column %s", col)
			}
		}
	}
	later := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)

	DescribeTable("the store's insert writes the row River's insert writes",
		func(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) {

			// The store's hand-written insert (PostgreSQL; on SQLite it goes through River): the
			// batch insert of InsertJobs.
			var ours int64
			Expect(st.Tx(ctx, func(tx *store.Store) error {
				before := lastJob(ctx, st, args.Kind())
				if err := tx.InsertJobs(ctx, []river.InsertManyParams{{Args: args, InsertOpts: opts}}); err != nil {
					return err
				}
				ours = lastJob(ctx, tx, args.Kind())
				Expect(ours).To(BeNumerically(">", before))
				return nil
			})).To(Succeed())
			theirs := jobRow(ctx, riverInsert(ctx, args, opts))
			expectSameRow(jobRow(ctx, ours), theirs)
		},
		Entry("with River's defaults", rowArgs{N: 1}, nil),
		Entry("with the args' own options", rowOptsArgs{N: 2}, nil),
		Entry("with the insert's options over the args' own", rowOptsArgs{N: 3},
			&river.InsertOpts{Queue: "store_test_other", MaxAttempts: 3, Priority: 4}),
		Entry("scheduled for later", rowArgs{N: 4}, &river.InsertOpts{ScheduledAt: later}),
	)
})

// lastJob is the id of the newest job of a kind, 0 when there is none.
func lastJob(ctx context.Context, s *store.Store, kind string) int64 {
	var id sql.NullInt64
	Expect(s.DB().WithContext(ctx).Raw(`SELECT MAX(id) FROM river_job WHERE kind = ?`, kind).Scan(&id).Error).To(Succeed())
	return id.Int64
}

// asTime reads a timestamp as either database returns it.
func asTime(v any) time.Time {
	switch t := v.(type) {
	case time.Time:
		return t
	case string:
		for _, layout := range []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999", time.RFC3339Nano} {
			if at, err := time.Parse(layout, t); err == nil {
				return at
			}
		}
	}
	Fail(fmt.Sprintf("not a timestamp: %#v", v))
	return time.Time{}
}

// withoutNonce is a job's metadata without the nonce River's SQLite driver adds to single inserts.
func withoutNonce(v any) string {
	s, ok := v.(string)
	Expect(ok).To(BeTrue(), "metadata is %#v", v)
	var m map[string]any
	Expect(json.Unmarshal([]byte(s), &m)).To(Succeed())
	delete(m, "river:unique_nonce")
	b, err := json.Marshal(m)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}
