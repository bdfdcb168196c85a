package store_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("API logs", func() {
	// logs returns n request logs of project, a second apart, oldest first (as the server
	// writes them), each with every field set.
	logs := func(project string, n int) []store.APILog {
		at := time.Now().UTC().Truncate(time.Microsecond).Add(-time.Hour)
		out := make([]store.APILog, n)
		for i := range out {
			out[i] = store.APILog{ProjectID: project, KeyID: "key_" + project, RequestID: fmt.Sprintf("req_%04d", i),
				Method: "POST", Path: "/accounts/acct_x/messages", Status: 201 + i%3, DurationMicros: int64(1000 + i),
				Query: fmt.Sprintf("limit=%d", i), IP: "192.0.2.7", UserAgent: "surge-go/1.0 é", ErrorType: []string{"", "validation_error"}[i%2],
				CreatedAt: at.Add(time.Duration(i) * time.Second)}
		}
		return out
	}
	// stored reads back project's logs newest first, without their ids.
	stored := func(ctx context.Context, project string, limit int) []store.APILog {
		got, err := st.ListAPILogs(ctx, project, limit)
		Expect(err).NotTo(HaveOccurred())
		for i := range got {
			Expect(got[i].ID).NotTo(BeZero())
			got[i].ID = 0
			got[i].CreatedAt = got[i].CreatedAt.UTC()
		}
		return got
	}
	// newest is in newest first, without ids (an INSERT fills them in, COPY does not).
	newest := func(in []store.APILog) []store.APILog {
		out := make([]store.APILog, len(in))
		for i, l := range in {
			l.ID = 0
			out[len(in)-1-i] = l
		}
		return out
	}

	It("writes every field of a batch, in order, and reads it back newest first", func(ctx context.Context) {
		project := "prj_logs_" + store.NewID("t")
		in := logs(project, 1200) // more than one INSERT statement holds
		Expect(st.InsertAPILogs(ctx, in)).To(Succeed())
		Expect(stored(ctx, project, 2000)).To(Equal(newest(in)))
	})

	It("writes nothing for an empty batch", func(ctx context.Context) {
		Expect(st.InsertAPILogs(ctx, nil)).To(Succeed())
	})

	It("gives a log without a time the time of its writing", func(ctx context.Context) {
		project := "prj_logs_" + store.NewID("t")
		in := logs(project, 1)
		in[0].CreatedAt = time.Time{}
		before := time.Now().Add(-time.Second)
		Expect(st.InsertAPILogs(ctx, in)).To(Succeed())
		got := stored(ctx, project, 1)
		Expect(got).To(HaveLen(1))
		Expect(got[0].CreatedAt).To(BeTemporally(">", before))
	})

	It("writes with a transaction that commits, and nothing with one that rolls back", func(ctx context.Context) {
		project := "prj_logs_" + store.NewID("t")
		in := logs(project, 3)
		boom := errors.New("boom")
		Expect(st.Tx(ctx, func(tx *store.Store) error {
			Expect(tx.InsertAPILogs(ctx, in[:1])).To(Succeed())
			return boom
		})).To(MatchError(boom))
		Expect(st.Tx(ctx, func(tx *store.Store) error { return tx.InsertAPILogs(ctx, in[1:]) })).To(Succeed())
		Expect(stored(ctx, project, 10)).To(Equal(newest(in[1:])))
	})
})
