package server_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// listPage is one decoded page of a list response.
type listPage struct {
	IDs      []string
	Next     *string
	Previous *string
}

// listAccounts fetches GET /accounts with the given query and decodes the page.
func (t *tenant) listAccounts(query string) listPage {
	r := t.get("/accounts?" + query)
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK), r.String())
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Pagination struct {
			NextCursor     *string `json:"next_cursor"`
			PreviousCursor *string `json:"previous_cursor"`
		} `json:"pagination"`
	}
	r.Into(&body)
	ExpectWithOffset(1, body.Data).NotTo(BeNil(), "data is an array, never null: %s", r.Body)
	p := listPage{Next: body.Pagination.NextCursor, Previous: body.Pagination.PreviousCursor}
	for _, d := range body.Data {
		p.IDs = append(p.IDs, d.ID)
	}
	return p
}

// createAccounts creates n accounts and returns their ids, newest first (the list order).
func (t *tenant) createAccounts(n int) []string {
	ids := make([]string, n)
	for i := range n {
		ids[n-1-i] = t.createAccount(fmt.Sprintf("Account %d", i+1))
	}
	return ids
}

var _ = Describe("Pagination", func() {
	var t *tenant
	BeforeEach(func() { t = newTenant() })

	It("refuses after and before together", func() {
		ids := t.createAccounts(2)
		first := t.listAccounts("limit=1")
		Expect(first.IDs).To(Equal(ids[0:1]))
		r := t.get("/accounts?after=" + url.QueryEscape(*first.Next) + "&before=" + url.QueryEscape(*first.Next))
		Expect(r).To(HaveFieldError("before"))
	})

	Describe("over three pages", func() {
		var ids []string
		BeforeEach(func() { ids = t.createAccounts(7) })

		It("walks forwards newest first, then back again to the same pages", func() {
			first := t.listAccounts("limit=3")
			Expect(first.IDs).To(Equal(ids[0:3]))
			Expect(first.Previous).To(BeNil(), "no previous page before the first")
			Expect(first.Next).NotTo(BeNil())

			second := t.listAccounts("limit=3&after=" + url.QueryEscape(*first.Next))
			Expect(second.IDs).To(Equal(ids[3:6]))
			Expect(second.Previous).NotTo(BeNil())
			Expect(second.Next).NotTo(BeNil())

			third := t.listAccounts("limit=3&after=" + url.QueryEscape(*second.Next))
			Expect(third.IDs).To(Equal(ids[6:7]))
			Expect(third.Previous).NotTo(BeNil())
			Expect(third.Next).To(BeNil(), "no next page after the last")

			By("walking backwards with before=previous_cursor")
			backSecond := t.listAccounts("limit=3&before=" + url.QueryEscape(*third.Previous))
			Expect(backSecond).To(Equal(second))
			backFirst := t.listAccounts("limit=3&before=" + url.QueryEscape(*backSecond.Previous))
			Expect(backFirst).To(Equal(first))
		})

		It("sees an account created meanwhile when going back to the first page", func() {
			first := t.listAccounts("limit=3")
			second := t.listAccounts("limit=3&after=" + url.QueryEscape(*first.Next))
			newest := t.createAccount("Newest")

			back := t.listAccounts("limit=3&before=" + url.QueryEscape(*second.Previous))
			Expect(back.IDs).To(Equal(ids[0:3]))
			Expect(back.Previous).NotTo(BeNil(), "the new account is on a page before this one")
			front := t.listAccounts("limit=3&before=" + url.QueryEscape(*back.Previous))
			Expect(front.IDs).To(Equal([]string{newest}))
			Expect(front.Previous).To(BeNil())
		})

		It("offers no next page when the last page is exactly full", func() {
			Expect(t.listAccounts("limit=7").Next).To(BeNil())
			six := t.listAccounts("limit=6")
			Expect(six.Next).NotTo(BeNil())
			last := t.listAccounts("limit=6&after=" + url.QueryEscape(*six.Next))
			Expect(last.IDs).To(Equal(ids[6:7]))
			Expect(last.Next).To(BeNil())
		})

		It("returns everything on one page when the limit allows it", func() {
			p := t.listAccounts("limit=100")
			Expect(p.IDs).To(Equal(ids))
			Expect(p.Next).To(BeNil())
			Expect(p.Previous).To(BeNil())
		})

		It("accepts the smallest limit", func() {
			p := t.listAccounts("limit=1")
			Expect(p.IDs).To(Equal(ids[0:1]))
			Expect(p.Next).NotTo(BeNil())
		})
	})

	It("pages by 25 by default", func() {
		ids := t.createAccounts(26)
		first := t.listAccounts("")
		Expect(first.IDs).To(Equal(ids[0:25]))
		Expect(first.Next).NotTo(BeNil())
		second := t.listAccounts("after=" + url.QueryEscape(*first.Next))
		Expect(second.IDs).To(Equal(ids[25:]))
		Expect(second.Next).To(BeNil())
	})

	It("answers an empty list with an empty array and no cursors", func() {
		p := t.listAccounts("")
		Expect(p.IDs).To(BeEmpty())
		Expect(p.Next).To(BeNil())
		Expect(p.Previous).To(BeNil())
	})

	DescribeTable("refuses an invalid page request with 422 naming the parameter",
		func(query, field string) {
			t.createAccount("Acme")
			Expect(t.get("/accounts?" + query)).To(HaveFieldError(field))
		},
		Entry("limit 0", "limit=0", "limit"),
		Entry("limit 101", "limit=101", "limit"),
		Entry("negative limit", "limit=-1", "limit"),
		Entry("limit not a number", "limit=ten", "limit"),
		Entry("after garbage", "after=garbage", "after"),
		Entry("after not base64", "after=%25%25%25", "after"),
		Entry("after base64 of something else", "after="+base64.RawURLEncoding.EncodeToString([]byte("hello world")), "after"),
		Entry("after too long", "after="+strings.Repeat("A", 201), "after"),
		Entry("before garbage", "before=garbage", "before"),
	)

	Describe("a cursor of another project", func() {
		It("is only a position: the page holds the caller's items alone", func() {
			other := newTenant()
			var mine, theirs []string
			for i := range 3 {
				theirs = append(theirs, other.createAccount(fmt.Sprintf("Theirs %d", i)))
				mine = append(mine, t.createAccount(fmt.Sprintf("Mine %d", i)))
			}
			theirFirst := other.listAccounts("limit=1")
			Expect(theirFirst.Next).NotTo(BeNil())
			theirSecond := other.listAccounts("limit=1&after=" + url.QueryEscape(*theirFirst.Next))
			Expect(theirSecond.Previous).NotTo(BeNil())

			after := t.listAccounts("after=" + url.QueryEscape(*theirFirst.Next))
			Expect(after.IDs).NotTo(BeEmpty())
			Expect(mine).To(ContainElements(after.IDs))
			Expect(theirs).NotTo(ContainElements(after.IDs[0]))

			before := t.listAccounts("before=" + url.QueryEscape(*theirSecond.Previous))
			Expect(before.IDs).NotTo(BeEmpty())
			Expect(mine).To(ContainElements(before.IDs))
		})

		It("naming an id of another project's account reveals nothing", func() {
			other := newTenant()
			other.createAccounts(2)
			Expect(t.listAccounts("limit=5&after=" + url.QueryEscape(*other.listAccounts("limit=1").Next)).IDs).To(BeEmpty())
			forged := base64.RawURLEncoding.EncodeToString([]byte("v1:" + store.NewID("acct")))
			Expect(t.listAccounts("after=" + forged).IDs).To(BeEmpty())
		})
	})
})
