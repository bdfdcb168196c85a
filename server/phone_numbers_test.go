package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/store"
)

// The simulated carrier's inventory (carriers/sim): local numbers are +1 AAA 555 01XX, toll-free
// ones +1 PPP 555 01XX for PPP in 833..888. The suite shares one database, so specs buy by area
// code or from a fresh search rather than by a fixed number.

// reviewTimeout bounds the wait for the simulated review (300 ms in the suite) and for jobs.
const reviewTimeout = 10 * time.Second

// demoNumberID is the shared demo number that migration 0003 creates.
const demoNumberID = "pn_01m809xke0e30awmwne8s7dzbh"

// buyNumber buys a number for an account and returns it.
func (t *tenant) buyNumber(account string, body map[string]any) map[string]any {
	r := t.post("/accounts/"+account+"/phone_numbers", body)
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
	return r.JSON()
}

// available returns the numbers a search offers.
func (t *tenant) available(account, query string) []string {
	r := t.get("/accounts/" + account + "/available_phone_numbers?" + query)
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK), r.String())
	var page struct {
		Data []struct {
			Number string `json:"number"`
		} `json:"data"`
	}
	r.Into(&page)
	out := make([]string, len(page.Data))
	for i, d := range page.Data {
		out[i] = d.Number
	}
	return out
}

// campaignBody is a complete standard 10DLC registration.
func campaignBody() map[string]any {
	return map[string]any{
		"use_cases":   []string{"account_notification", "customer_care"},
		"description": "DT Precision Auto sends service reminders and answers customer questions about repairs.",
		"message_samples": []string{
			"You are now opted in to messages from DT Precision Auto. Reply STOP to opt out.",
			"Hi Mia, your car is ready for pickup.",
		},
		"consent_flow":       "Customers opt in by checking a box on the service form.",
		"includes":           []string{"links"},
		"privacy_policy_url": "https://dtprecisionauto.com/privacy",
		"volume":             "low",
	}
}

// createCampaign creates a 10DLC campaign for an account and returns it.
func (t *tenant) createCampaign(account string, body map[string]any) map[string]any {
	r := t.post("/accounts/"+account+"/campaigns", body)
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
	return r.JSON()
}

// activeCampaign creates a campaign and approves it through the inbound path.
func (t *tenant) activeCampaign(account string) string {
	id := t.createCampaign(account, campaignBody())["id"].(string)
	forceVerdict(id, true)
	return id
}

// forceVerdict reports a verdict as the simulated registry (or its operator command) would.
func forceVerdict(reference string, approved bool) {
	v := &carriers.Verdict{Reference: reference, Approved: approved}
	if !approved {
		v.Reason = "forced by the spec"
	}
	ExpectWithOffset(1, core.Reports.Report(context.Background(), carriers.Report{Carrier: sim.Name, Verdict: v})).To(Succeed())
}

// statusOfResource is a resource's status field, as GET shows it.
func (t *tenant) statusOfResource(path string) string {
	r := t.get(path)
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK), r.String())
	return r.JSON()["status"].(string)
}

// eventEnvelopes returns the project's events of one type, newest first, as account_id, type and
// decoded data.
func (t *tenant) eventEnvelopes(typ string) []map[string]any {
	rows, _, err := st.ListEvents(context.Background(), t.ProjectID, typ, store.Page{Limit: 100})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	out := make([]map[string]any, len(rows))
	for i, e := range rows {
		var data map[string]any
		ExpectWithOffset(1, json.Unmarshal([]byte(e.Data), &data)).To(Succeed())
		out[i] = map[string]any{"account_id": e.AccountID, "type": e.Type, "data": data}
	}
	return out
}

var _ = Describe("Phone numbers", func() {
	var (
		t       *tenant
		account string
	)
	BeforeEach(func() {
		t = newTenant()
		account = t.createAccount("DT Precision Auto")
	})

	Describe("GET /accounts/{account_id}/available_phone_numbers", func() {
		It("offers local numbers of the area code, in E.164, up to limit", func() {
			r := t.get("/accounts/" + account + "/available_phone_numbers?type=local&area_code=206&limit=3")
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			var page struct {
				Data []map[string]any `json:"data"`
			}
			r.Into(&page)
			Expect(page.Data).To(HaveLen(3))
			Expect(page.Data).To(HaveEach(SatisfyAll(
				HaveKeyWithValue("number", MatchRegexp(`^\+1206555\d{4}$`)),
				HaveKeyWithValue("type", "local"), HaveKeyWithValue("country", "US"),
			)))
			Expect(r.JSON()).To(HaveKeyWithValue("pagination", HaveKeyWithValue("previous_cursor", BeNil())), "a page, the first")
		})

		DescribeTable("offers what the query asks for",
			func(query string, pattern string, count int) {
				got := t.available(account, query)
				Expect(got).To(HaveLen(count))
				for _, n := range got {
					Expect(n).To(MatchRegexp(pattern))
				}
			},
			Entry("25 local US numbers by default", "type=local", `^\+1\d{10}$`, 25),
			Entry("toll-free numbers in 833 to 888 only", "type=toll_free&limit=100", `^\+18(33|44|55|66|77|88)\d{7}$`, 100),
			Entry("toll-free numbers of a prefix", "type=toll_free&area_code=877&limit=5", `^\+1877\d{7}$`, 5),
			Entry("Canadian numbers of a Canadian area code", "type=local&country=CA&area_code=604&limit=4", `^\+1604\d{7}$`, 4),
			Entry("nothing for a Canadian area code in the US", "type=local&country=US&area_code=604", ``, 0),
			Entry("nothing for an area code without numbers", "type=local&area_code=999", ``, 0),
		)

		It("pages through the search with after and before, as Surge's listAvailableNumbers cursor does", func() {
			type page struct {
				Data []struct {
					Number string `json:"number"`
				} `json:"data"`
				Pagination struct {
					Next     *string `json:"next_cursor"`
					Previous *string `json:"previous_cursor"`
				} `json:"pagination"`
			}
			get := func(query string) (numbers []string, pg page) {
				r := t.get("/accounts/" + account + "/available_phone_numbers?type=local&area_code=801&limit=40" + query)
				ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK), r.String())
				r.Into(&pg)
				for _, d := range pg.Data {
					numbers = append(numbers, d.Number)
				}
				return numbers, pg
			}
			first, p1 := get("")
			Expect(first).To(HaveLen(40))
			Expect(p1.Pagination.Previous).To(BeNil())
			Expect(p1.Pagination.Next).NotTo(BeNil())
			second, p2 := get("&after=" + *p1.Pagination.Next)
			Expect(second).To(HaveLen(40))
			Expect(second).NotTo(ContainElements(first[0]))
			Expect(second[0]).To(Equal("+18015550140"))
			third, p3 := get("&after=" + *p2.Pagination.Next)
			Expect(third).To(HaveLen(20), "the area code has 100 numbers")
			Expect(p3.Pagination.Next).To(BeNil())
			back, _ := get("&before=" + *p2.Pagination.Previous)
			Expect(back).To(Equal(first))
			Expect(t.get("/accounts/" + account + "/available_phone_numbers?type=local&after=bm9wZQ")).To(HaveFieldError("after"))
		})

		It("never offers a number that is held, by anyone", func() {
			other := newTenant()
			bought := other.buyNumber(other.createAccount("Other"), map[string]any{"area_code": "312"})["number"].(string)
			Expect(t.available(account, "type=local&area_code=312&limit=100")).NotTo(ContainElement(bought))
		})

		It("refuses the 800 prefix: port-in only", func() {
			r := t.get("/accounts/" + account + "/available_phone_numbers?type=toll_free&area_code=800")
			Expect(r).To(HaveError(http.StatusUnprocessableEntity, "number_not_available"))
			Expect(decodeEnvelope(r.Body)).To(HaveKeyWithValue("detail", HaveKeyWithValue("reason", "port_in_only")))
			Expect(decodeEnvelope(r.Body)["message"]).To(ContainSubstring("port"))
		})

		DescribeTable("validates the query",
			func(query, field string) {
				Expect(t.get("/accounts/" + account + "/available_phone_numbers?" + query)).To(HaveFieldError(field))
			},
			Entry("type missing", "area_code=415", "type"),
			Entry("type short_code", "type=short_code", "type"),
			Entry("area code of two digits", "type=local&area_code=41", "area_code"),
			Entry("country outside the US and Canada", "type=local&country=GB", "country"),
			Entry("limit over 100", "type=local&limit=101", "limit"),
		)

		It("answers 404 for an account of another project", func() {
			theirs := newTenant().createAccount("Theirs")
			Expect(t.get("/accounts/" + theirs + "/available_phone_numbers?type=local")).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("POST /accounts/{account_id}/phone_numbers", func() {
		It("buys a local number by area code, named after its national format", func() {
			n := t.buyNumber(account, map[string]any{"area_code": "512"})
			Expect(n).To(MatchAllKeys(Keys{
				"id":          MatchRegexp(`^pn_[0-7][0-9a-hjkmnp-tv-z]{25}$`),
				"number":      MatchRegexp(`^\+1512555\d{4}$`),
				"type":        Equal("local"),
				"name":        MatchRegexp(`^\(512\) 555-\d{4}$`),
				"metadata":    BeEmpty(),
				"campaign":    BeNil(),
				"campaign_id": BeNil(),
				"created_at":  Not(BeEmpty()),
			}))
			held, err := st.HeldNumber(context.Background(), n["number"].(string))
			Expect(err).NotTo(HaveOccurred())
			Expect(held.Carrier).To(Equal(sim.Name), "the number records the carrier that provides it")
		})

		DescribeTable("buys by type alone",
			func(body map[string]any, pattern string) {
				Expect(t.buyNumber(account, body)["number"]).To(MatchRegexp(pattern))
			},
			Entry("a local US number by default", map[string]any{}, `^\+1\d{3}555\d{4}$`),
			Entry("a toll-free number", map[string]any{"type": "toll_free"}, `^\+18(33|44|55|66|77|88)555\d{4}$`),
			Entry("a toll-free number of a prefix", map[string]any{"type": "toll_free", "area_code": "855"}, `^\+1855555\d{4}$`),
			Entry("a Canadian number", map[string]any{"country": "CA", "area_code": "514"}, `^\+1514555\d{4}$`),
		)

		DescribeTable("infers the type and buys the nearest number to a place, as Surge's purchase does",
			func(body map[string]any, pattern, typ, country string) {
				n := t.buyNumber(account, body)
				Expect(n["number"]).To(MatchRegexp(pattern))
				Expect(n["type"]).To(Equal(typ))
				held, err := st.HeldNumber(context.Background(), n["number"].(string))
				Expect(err).NotTo(HaveOccurred())
				Expect(held.Country).To(Equal(country))
			},
			Entry("a toll-free prefix without a type: toll-free", map[string]any{"area_code": "888"}, `^\+1888555\d{4}$`, "toll_free", "US"),
			Entry("a local area code without a type: local", map[string]any{"area_code": "206"}, `^\+1206555\d{4}$`, "local", "US"),
			Entry("a place in Oakland: Oakland's 510", map[string]any{"latitude": 37.8044, "longitude": -122.2712}, `^\+1510555\d{4}$`, "local", "US"),
			Entry("a place in Toronto without a country: Toronto's 416", map[string]any{"latitude": 43.70, "longitude": -79.42}, `^\+1416555\d{4}$`, "local", "CA"),
			Entry("a place in Toronto in the US: Buffalo's 716", map[string]any{"latitude": 43.70, "longitude": -79.42, "country": "US"}, `^\+1716555\d{4}$`, "local", "US"),
			Entry("a place with type local", map[string]any{"latitude": 47.61, "longitude": -122.33, "type": "local"}, `^\+1206555\d{4}$`, "local", "US"),
		)

		DescribeTable("refuses a place that is not one, naming the field",
			func(body map[string]any, field string) {
				Expect(t.post("/accounts/"+account+"/phone_numbers", body)).To(HaveFieldError(field))
			},
			Entry("latitude without longitude", map[string]any{"latitude": 37.8}, "longitude"),
			Entry("longitude without latitude", map[string]any{"longitude": -122.27}, "latitude"),
			Entry("a latitude past the pole", map[string]any{"latitude": 91, "longitude": 0}, "latitude"),
			Entry("a longitude past the antimeridian", map[string]any{"latitude": 0, "longitude": -181}, "longitude"),
			Entry("a place for a toll-free number", map[string]any{"latitude": 37.8, "longitude": -122.27, "type": "toll_free"}, "latitude"),
			Entry("a place with an exact number", map[string]any{"latitude": 37.8, "longitude": -122.27, "phone_number": "+15105550150"}, "latitude"),
		)

		It("refuses the 800 prefix without a type as a toll-free number that only port-in brings", func() {
			r := t.post("/accounts/"+account+"/phone_numbers", map[string]any{"area_code": "800"})
			Expect(r).To(HaveError(http.StatusUnprocessableEntity, "number_not_available"))
			Expect(r.JSON()["error"]).To(HaveKeyWithValue("detail", HaveKeyWithValue("reason", "port_in_only")))
		})

		It("buys the exact number asked for, with the name given", func() {
			want := t.available(account, "type=local&area_code=617&limit=3")[2]
			n := t.buyNumber(account, map[string]any{"phone_number": want, "name": "Front desk"})
			Expect(n).To(SatisfyAll(HaveKeyWithValue("number", want), HaveKeyWithValue("name", "Front desk"),
				HaveKeyWithValue("type", "local")))
			Expect(t.available(account, "type=local&area_code=617&limit=100")).NotTo(ContainElement(want))
		})

		It("buys an exact toll-free number as toll-free", func() {
			want := t.available(account, "type=toll_free&area_code=866&limit=1")[0]
			Expect(t.buyNumber(account, map[string]any{"phone_number": want})).To(HaveKeyWithValue("type", "toll_free"))
		})

		It("refuses a number another project holds", func() {
			other := newTenant()
			taken := other.buyNumber(other.createAccount("Other"), map[string]any{"area_code": "415"})["number"]
			Expect(t.post("/accounts/"+account+"/phone_numbers", map[string]any{"phone_number": taken})).
				To(HaveError(http.StatusUnprocessableEntity, "number_not_available"))
		})

		It("sells a number once when purchases race", func() {
			want := t.available(account, "type=local&area_code=415&limit=1")[0]
			statuses := make(chan int, 6)
			var wg sync.WaitGroup
			for range cap(statuses) {
				wg.Go(func() {
					defer GinkgoRecover()
					buyer := newTenant()
					statuses <- buyer.post("/accounts/"+buyer.createAccount("Racer")+"/phone_numbers", map[string]any{"phone_number": want}).Status
				})
			}
			wg.Wait()
			close(statuses)
			sold := 0
			for code := range statuses {
				Expect(code).To(BeElementOf(http.StatusCreated, http.StatusUnprocessableEntity))
				if code == http.StatusCreated {
					sold++
				}
			}
			Expect(sold).To(Equal(1))
			held, err := st.HeldNumber(context.Background(), want)
			Expect(err).NotTo(HaveOccurred())
			Expect(held.Carrier).To(Equal(sim.Name))
		})

		DescribeTable("refuses what cannot be bought with 422",
			func(body map[string]any, typ string) {
				Expect(t.post("/accounts/"+account+"/phone_numbers", body)).To(HaveError(http.StatusUnprocessableEntity, typ))
			},
			Entry("a short code", map[string]any{"type": "short_code"}, "short_code_not_purchasable"),
			Entry("an 800 number (port-in only)", map[string]any{"phone_number": "+18005550100"}, "number_not_available"),
			Entry("the 800 prefix", map[string]any{"type": "toll_free", "area_code": "800"}, "number_not_available"),
			Entry("a number outside the inventory", map[string]any{"phone_number": "+14155551234"}, "number_not_available"),
			Entry("the shared demo number", map[string]any{"phone_number": "+18335550000"}, "number_not_available"),
			Entry("an area code without numbers", map[string]any{"area_code": "999"}, "number_not_available"),
			Entry("a local number of another country", map[string]any{"phone_number": "+14165550150", "country": "US"}, "number_not_available"),
			Entry("a number outside North America", map[string]any{"phone_number": "+442071838750"}, "number_not_available"),
			Entry("phone_number and area_code together", map[string]any{"phone_number": "+14155550150", "area_code": "415"}, "validation_error"),
			Entry("a type that the number is not", map[string]any{"phone_number": "+18445550150", "type": "local"}, "validation_error"),
			Entry("an unknown field", map[string]any{"area_code": "415", "vanity": true}, "validation_error"),
		)

		It("refuses an archived account", func() {
			Expect(t.delete("/accounts/" + account)).To(HaveStatus(http.StatusOK))
			Expect(t.post("/accounts/"+account+"/phone_numbers", map[string]any{})).
				To(HaveError(http.StatusUnprocessableEntity, "account_archived"))
		})

		It("answers 404 for an account of another project", func() {
			theirs := newTenant().createAccount("Theirs")
			Expect(t.post("/accounts/"+theirs+"/phone_numbers", map[string]any{})).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("GET /accounts/{account_id}/phone_numbers and /phone_numbers/{id}", func() {
		It("lists the account's numbers newest first, page by page, without the demo number", func() {
			var ids []string
			for range 3 {
				ids = append([]string{t.buyNumber(account, map[string]any{"area_code": "212"})["id"].(string)}, ids...)
			}
			t.buyNumber(t.createAccount("Sibling"), map[string]any{"area_code": "212"})
			first := t.get("/accounts/" + account + "/phone_numbers?limit=2")
			Expect(idsOf(first)).To(Equal(ids[:2]))
			next, _ := cursorsOf(first)
			second := t.get("/accounts/" + account + "/phone_numbers?limit=2&after=" + next)
			Expect(idsOf(second)).To(Equal(ids[2:]))
			Expect(idsOf(t.get("/accounts/" + account + "/phone_numbers"))).NotTo(ContainElement(demoNumberID))
		})

		It("retrieves a number as it was bought", func() {
			n := t.buyNumber(account, map[string]any{"type": "toll_free"})
			r := t.get("/phone_numbers/" + n["id"].(string))
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.JSON()).To(Equal(n))
		})

		It("has one shared demo number, which no project owns, provided by the simulated carrier", func() {
			demo, err := st.HeldNumber(context.Background(), "+18335550000")
			Expect(err).NotTo(HaveOccurred())
			Expect(*demo).To(MatchFields(IgnoreExtras, Fields{
				"ID": Equal(demoNumberID), "ProjectID": BeEmpty(), "AccountID": BeNil(), "Type": Equal(store.NumberDemo),
				"Carrier": Equal(sim.Name), "CreatedAt": Not(BeZero()),
			}))
		})

		It("answers 404 for another project's number and for the shared demo number", func() {
			other := newTenant()
			theirs := other.buyNumber(other.createAccount("Theirs"), map[string]any{})["id"].(string)
			Expect(t.get("/phone_numbers/" + theirs)).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.get("/phone_numbers/" + demoNumberID)).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.get("/accounts/" + other.createAccount("X") + "/phone_numbers")).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("PATCH /phone_numbers/{id}", func() {
		var number map[string]any
		BeforeEach(func() { number = t.buyNumber(account, map[string]any{"area_code": "415"}) })
		path := func() string { return "/phone_numbers/" + number["id"].(string) }

		It("renames the number and leaves the rest", func() {
			r := t.patch(path(), map[string]any{"name": "Service desk"})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("name", "Service desk"), HaveKeyWithValue("number", number["number"])))
			Expect(t.get(path()).JSON()).To(HaveKeyWithValue("name", "Service desk"))
		})

		It("attaches to a campaign in review as pending, then attached on approval, with the event", func() {
			cpn := t.createCampaign(account, campaignBody())["id"].(string)
			r := t.patch(path(), map[string]any{"campaign_id": cpn})
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(SatisfyAll(
				HaveKeyWithValue("campaign", map[string]any{"id": cpn, "attachment_status": "attachment_pending"}),
				HaveKeyWithValue("campaign_id", cpn),
			))
			Expect(t.eventEnvelopes("phone_number.attached_to_campaign")).To(BeEmpty())

			forceVerdict(cpn, true)
			Expect(t.get(path()).JSON()).To(HaveKeyWithValue("campaign", map[string]any{"id": cpn, "attachment_status": "attached"}))
			Expect(t.eventEnvelopes("phone_number.attached_to_campaign")).To(ConsistOf(Equal(map[string]any{
				"account_id": account, "type": "phone_number.attached_to_campaign",
				"data": map[string]any{
					"id": number["id"], "metadata": map[string]any{}, "name": number["name"], "number": number["number"],
					"type": "local", "campaign": map[string]any{"id": cpn, "attachment_status": "attached"}, "campaign_id": cpn,
				},
			})))
		})

		It("attaches to an active campaign at once, once", func() {
			cpn := t.activeCampaign(account)
			r := t.patch(path(), map[string]any{"campaign_id": cpn, "name": "Main line"})
			Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("name", "Main line"),
				HaveKeyWithValue("campaign", map[string]any{"id": cpn, "attachment_status": "attached"})))
			Expect(t.patch(path(), map[string]any{"campaign_id": cpn})).To(HaveStatus(http.StatusOK))
			events := t.eventEnvelopes("phone_number.attached_to_campaign")
			Expect(events).To(HaveLen(1), "repeating the attachment emits nothing")
			Expect(events[0]["data"]).To(HaveKeyWithValue("name", "Main line"))
		})

		It("detaches a pending attachment when the campaign is rejected", func() {
			cpn := t.createCampaign(account, campaignBody())["id"].(string)
			Expect(t.patch(path(), map[string]any{"campaign_id": cpn})).To(HaveStatus(http.StatusOK))
			forceVerdict(cpn, false)
			Expect(t.get(path()).JSON()).To(HaveKeyWithValue("campaign", map[string]any{"id": cpn, "attachment_status": "detached"}))
			Expect(t.eventEnvelopes("phone_number.attached_to_campaign")).To(BeEmpty())
		})

		It("moves to another campaign of the account", func() {
			first, second := t.activeCampaign(account), t.activeCampaign(account)
			Expect(t.patch(path(), map[string]any{"campaign_id": first})).To(HaveStatus(http.StatusOK))
			r := t.patch(path(), map[string]any{"campaign_id": second})
			Expect(r.JSON()).To(HaveKeyWithValue("campaign_id", second))
			Expect(t.eventEnvelopes("phone_number.attached_to_campaign")).To(HaveLen(2))
		})

		DescribeTable("refuses an attachment with 422 on campaign_id",
			func(setup func() (numberID, campaignID string)) {
				id, cpn := setup()
				r := t.patch("/phone_numbers/"+id, map[string]any{"campaign_id": cpn})
				Expect(r).To(HaveFieldError("campaign_id"))
				Expect(t.get("/phone_numbers/" + id).JSON()).To(HaveKeyWithValue("campaign", BeNil()))
			},
			Entry("of a toll-free number", func() (string, string) {
				return t.buyNumber(account, map[string]any{"type": "toll_free"})["id"].(string), t.activeCampaign(account)
			}),
			Entry("of a Canadian local number", func() (string, string) {
				return t.buyNumber(account, map[string]any{"country": "CA"})["id"].(string), t.activeCampaign(account)
			}),
			Entry("of a short code", func() (string, string) {
				sc := &store.PhoneNumber{ProjectID: t.ProjectID, AccountID: &account, Number: "728437", Type: store.NumberShortCode,
					Country: "US", Carrier: sim.Name}
				Expect(st.InsertPhoneNumber(context.Background(), sc)).To(Succeed())
				return sc.ID, t.activeCampaign(account)
			}),
			Entry("to a campaign of another account", func() (string, string) {
				return number["id"].(string), t.activeCampaign(t.createAccount("Sibling"))
			}),
			Entry("to a campaign of another project", func() (string, string) {
				other := newTenant()
				return number["id"].(string), other.activeCampaign(other.createAccount("Theirs"))
			}),
			Entry("to a campaign that does not exist", func() (string, string) {
				return number["id"].(string), store.NewID(store.PrefixCampaign)
			}),
			Entry("to a rejected campaign", func() (string, string) {
				cpn := t.createCampaign(account, campaignBody())["id"].(string)
				forceVerdict(cpn, false)
				return number["id"].(string), cpn
			}),
		)

		DescribeTable("validates the body",
			func(body any, field string) { Expect(t.patch(path(), body)).To(HaveFieldError(field)) },
			Entry("campaign_id not a campaign id", map[string]any{"campaign_id": "cmp_123"}, "campaign_id"),
			Entry("name too long", map[string]any{"name": strings.Repeat("x", 256)}, "name"),
			Entry("an unknown field", map[string]any{"number": "+14155550100"}, "number"),
		)

		It("answers 404 for another project's number", func() {
			Expect(newTenant().patch(path(), map[string]any{"name": "Mine"})).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("DELETE /phone_numbers/{id}", func() {
		It("releases the number: gone from the API, offered again, buyable by anyone", func() {
			n := t.buyNumber(account, map[string]any{"area_code": "403", "country": "CA"})
			id, num := n["id"].(string), n["number"].(string)
			r := t.delete("/phone_numbers/" + id)
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(HaveKeyWithValue("id", id))
			Expect(t.get("/phone_numbers/" + id)).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(idsOf(t.get("/accounts/" + account + "/phone_numbers"))).NotTo(ContainElement(id))
			Expect(t.delete("/phone_numbers/" + id)).To(HaveError(http.StatusNotFound, "not_found"))

			Eventually(func() []string { return t.available(account, "type=local&country=CA&area_code=403&limit=100") }).
				WithTimeout(reviewTimeout).Should(ContainElement(num), "the carrier got it back")
			other := newTenant()
			Expect(other.buyNumber(other.createAccount("Next owner"), map[string]any{"phone_number": num})).
				To(HaveKeyWithValue("number", num))
		})

		It("cancels the number's toll-free campaign", func() {
			n := t.buyNumber(account, map[string]any{"type": "toll_free"})
			tfc := t.createTollFreeCampaign(account, n["id"].(string))["id"].(string)
			Expect(t.delete("/phone_numbers/" + n["id"].(string))).To(HaveStatus(http.StatusOK))
			Expect(t.statusOfResource("/toll_free_campaigns/" + tfc)).To(Equal("canceled"))
		})

		It("answers 404 for another project's number", func() {
			id := t.buyNumber(account, map[string]any{})["id"].(string)
			Expect(newTenant().delete("/phone_numbers/" + id)).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.get("/phone_numbers/" + id)).To(HaveStatus(http.StatusOK))
		})
	})
})
