package store_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("Idempotency keys", func() {
	const (
		ttl   = 24 * time.Hour
		lease = 5 * time.Second
	)
	var (
		ctx     context.Context
		project string
		now     time.Time
	)
	BeforeEach(func() {
		ctx = context.Background()
		p, err := st.CreateProject(ctx, "idempotency")
		Expect(err).NotTo(HaveOccurred())
		project, now = p.ID, time.Now().UTC().Truncate(time.Microsecond)
	})
	claim := func(key, hash string, at time.Time) (*store.IdempotencyClaim, *store.IdempotencyRecord) {
		c, prior, err := st.ClaimIdempotencyKey(ctx, project, key, hash, at, ttl, lease)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		ExpectWithOffset(1, (c == nil) != (prior == nil)).To(BeTrue(), "a claim or the record that stands")
		return c, prior
	}
	accounts := func() int64 {
		var n int64
		ExpectWithOffset(1, st.DB().Raw(`SELECT COUNT(*) FROM accounts WHERE project_id = ?`, project).Scan(&n).Error).To(Succeed())
		return n
	}

	It("gives a new key to its first request and shows the others the claim in flight", func() {
		c, _ := claim("k", "h", now)
		Expect(c).To(PointTo(MatchFields(IgnoreExtras, Fields{"ProjectID": Equal(project), "Key": Equal("k"), "Token": Not(BeEmpty())})))
		_, prior := claim("k", "h", now.Add(lease-time.Millisecond))
		Expect(prior.Status).To(BeZero())
		Expect(prior.ResourceID).To(BeNil())
		Expect(prior.LeaseUntil).To(PointTo(BeTemporally("==", now.Add(lease))))
	})

	It("lets the same request take a lapsed claim over, with a new token, and not another request", func() {
		dead, _ := claim("k", "h", now)
		_, prior := claim("k", "other", now.Add(lease+time.Second))
		Expect(prior.RequestHash).To(Equal("h"), "another request's body does not take the key")
		retry, _ := claim("k", "h", now.Add(lease+time.Second))
		Expect(retry).NotTo(BeNil())
		Expect(retry.Token).NotTo(Equal(dead.Token))

		held, err := st.RenewIdempotencyKey(ctx, dead, now.Add(time.Hour))
		Expect(err).NotTo(HaveOccurred())
		Expect(held).To(BeFalse(), "the dead request's claim is gone")
		Expect(st.CreateAccount(store.WithIdempotencyClaim(ctx, dead), &store.Account{ProjectID: project, Name: "Dead"})).
			To(MatchError(store.ErrIdempotencyClaimLost))
		Expect(accounts()).To(BeZero(), "a lost claim writes nothing")
		Expect(st.CompleteIdempotencyKey(ctx, dead, 201, "application/json", []byte(`{}`))).To(Succeed())
		_, prior = claim("k", "h", now.Add(lease+2*time.Second))
		Expect(prior.Status).To(BeZero(), "the dead request's response is not recorded")
	})

	It("keeps a renewed claim past its first lease", func() {
		c, _ := claim("k", "h", now)
		held, err := st.RenewIdempotencyKey(ctx, c, now.Add(2*lease))
		Expect(err).NotTo(HaveOccurred())
		Expect(held).To(BeTrue())
		_, prior := claim("k", "h", now.Add(lease+time.Second))
		Expect(prior).NotTo(BeNil())
	})

	It("records the resource with the key in the transaction that creates it", func() {
		c, _ := claim("k", "h", now)
		a := &store.Account{ProjectID: project, Name: "Created"}
		Expect(st.CreateAccount(store.WithIdempotencyClaim(ctx, c), a)).To(Succeed())
		_, prior := claim("k", "h", now.Add(time.Hour))
		Expect(prior.ResourceID).To(PointTo(Equal(a.ID)), "a committed resource is not taken over, however old the lease")
		Expect(prior.Status).To(BeZero())

		Expect(st.ReleaseIdempotencyKey(ctx, c)).To(Succeed())
		_, prior = claim("k", "h", now.Add(time.Hour))
		Expect(prior.ResourceID).To(PointTo(Equal(a.ID)), "a release keeps a committed resource")

		Expect(st.CompleteIdempotencyKey(ctx, c, 201, "application/json", []byte(`{"id":"x"}`))).To(Succeed())
		_, prior = claim("k", "h", now.Add(time.Hour))
		Expect(prior).To(PointTo(MatchFields(IgnoreExtras, Fields{"Status": Equal(201), "Body": Equal([]byte(`{"id":"x"}`))})))
		Expect(accounts()).To(BeEquivalentTo(1))
	})

	It("forgets a released claim that committed nothing, so a retry runs at once", func() {
		c, _ := claim("k", "h", now)
		Expect(st.ReleaseIdempotencyKey(ctx, c)).To(Succeed())
		again, _ := claim("k", "h", now)
		Expect(again).NotTo(BeNil())
	})

	It("replaces a record older than the time to live", func() {
		c, _ := claim("k", "h", now)
		Expect(st.CompleteIdempotencyKey(ctx, c, 201, "application/json", []byte(`{}`))).To(Succeed())
		fresh, _ := claim("k", "other", now.Add(ttl+time.Second))
		Expect(fresh).NotTo(BeNil())
	})
})
