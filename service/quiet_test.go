package service_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

var _ = Describe("Quiet hours", func() {
	zone := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		Expect(err).NotTo(HaveOccurred())
		return loc
	}
	newYork, london := zone("America/New_York"), zone("Europe/London")
	at := func(loc *time.Location, s string) time.Time {
		t, err := time.ParseInLocation("2006-01-02 15:04:05", s, loc)
		Expect(err).NotTo(HaveOccurred())
		return t
	}
	day := service.DefaultQuietHours // 08:00 to 21:00
	const nyHandset = "+16465550100" // New York City

	It("writes every minute, and any other number, as fmt's %02d:%02d", func() {
		for minutes := -200; minutes < 7000; minutes++ {
			Expect(service.FormatClock(minutes)).To(Equal(fmt.Sprintf("%02d:%02d", minutes/60, minutes%60)), "%d", minutes)
		}
	})

	DescribeTable("reads HH:MM times of day and refuses anything else",
		func(in string, minutes int, ok bool) {
			got, err := service.ParseClock(in)
			if !ok {
				Expect(err).To(HaveOccurred())
				return
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(minutes))
			Expect(service.FormatClock(got)).To(Equal(in))
		},
		Entry("midnight", "00:00", 0, true),
		Entry("morning", "08:00", 480, true),
		Entry("the last minute", "23:59", 1439, true),
		Entry("24:00", "24:00", 0, false),
		Entry("minute 60", "12:60", 0, false),
		Entry("one-digit hour", "8:00", 0, false),
		Entry("seconds", "08:00:00", 0, false),
		Entry("a sign", "+8:00", 0, false),
		Entry("letters", "noon!", 0, false),
		Entry("empty", "", 0, false),
	)

	DescribeTable("refuses a window whose start is its end",
		func(q service.QuietHours, field string) {
			err := q.Validate("quiet_hours")
			if field == "" {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			var se *service.Error
			Expect(err).To(BeAssignableToTypeOf(se))
			Expect(err.(*service.Error).Detail).To(HaveKey(field))
		},
		Entry("the default", service.DefaultQuietHours, ""),
		Entry("one past midnight", service.QuietHours{Start: 22 * 60, End: 6 * 60}, ""),
		Entry("start equals end", service.QuietHours{Start: 600, End: 600}, "quiet_hours.end"),
		Entry("a start past the day", service.QuietHours{Start: 1440, End: 600}, "quiet_hours.start"),
		Entry("a negative end", service.QuietHours{Start: 60, End: -1}, "quiet_hours.end"),
	)

	Describe("at the window's edges (recipient in New York, 08:00 to 21:00)", func() {
		DescribeTable("sends inside the window and holds outside it until the next opening",
			func(now, want string) {
				t := at(newYork, now)
				Expect(day.ReleaseFor(nyHandset, nil, t)).To(BeTemporally("==", at(newYork, want)))
			},
			Entry("a second before the end: at once", "2027-06-15 20:59:59", "2027-06-15 20:59:59"),
			Entry("at the end: tomorrow 08:00", "2027-06-15 21:00:00", "2027-06-16 08:00:00"),
			Entry("at midnight: 08:00", "2027-06-16 00:00:00", "2027-06-16 08:00:00"),
			Entry("a second before the start: 08:00", "2027-06-16 07:59:59", "2027-06-16 08:00:00"),
			Entry("at the start: at once", "2027-06-16 08:00:00", "2027-06-16 08:00:00"),
		)

		It("takes the recipient's zone, not the account's", func() {
			// 13:00 in New York is 18:00 in London: open for New York, whatever the account's zone.
			t := at(newYork, "2027-06-15 13:00:00")
			Expect(day.ReleaseFor(nyHandset, london, t)).To(BeTemporally("==", t))
			// 22:00 in London is 17:00 in New York: a London handset waits for 08:00 London.
			t = at(london, "2027-06-15 22:00:00")
			Expect(day.ReleaseFor("+447700900123", newYork, t)).To(BeTemporally("==", at(london, "2027-06-16 08:00:00")))
		})

		It("runs a window past midnight from its start to its end the next day", func() {
			night := service.QuietHours{Start: 22 * 60, End: 6 * 60}
			Expect(night.ReleaseFor(nyHandset, nil, at(newYork, "2027-06-15 23:30:00"))).To(BeTemporally("==", at(newYork, "2027-06-15 23:30:00")))
			Expect(night.ReleaseFor(nyHandset, nil, at(newYork, "2027-06-16 05:59:00"))).To(BeTemporally("==", at(newYork, "2027-06-16 05:59:00")))
			Expect(night.ReleaseFor(nyHandset, nil, at(newYork, "2027-06-16 06:00:00"))).To(BeTemporally("==", at(newYork, "2027-06-16 22:00:00")))
		})
	})

	Describe("across a DST change", func() {
		It("opens at 08:00 local on the morning the clocks went forward (one hour earlier in UTC)", func() {
			// New York: 2027-03-14 02:00 EST becomes 03:00 EDT.
			got := day.ReleaseFor(nyHandset, nil, at(newYork, "2027-03-13 21:30:00"))
			Expect(got.UTC()).To(Equal(time.Date(2027, 3, 14, 12, 0, 0, 0, time.UTC)))
			before := day.ReleaseFor(nyHandset, nil, at(newYork, "2027-03-12 21:30:00"))
			Expect(before.UTC()).To(Equal(time.Date(2027, 3, 13, 13, 0, 0, 0, time.UTC)))
			Expect(got.Sub(at(newYork, "2027-03-13 21:30:00"))).To(Equal(9*time.Hour+30*time.Minute), "a night an hour short")
		})

		It("opens at 08:00 local on the morning the clocks went back (one hour later in UTC)", func() {
			// New York: 2027-11-07 02:00 EDT becomes 01:00 EST.
			got := day.ReleaseFor(nyHandset, nil, at(newYork, "2027-11-06 21:30:00"))
			Expect(got.UTC()).To(Equal(time.Date(2027, 11, 7, 13, 0, 0, 0, time.UTC)))
			Expect(got.Sub(at(newYork, "2027-11-06 21:30:00"))).To(Equal(11*time.Hour+30*time.Minute), "a night an hour long")
		})

		It("follows the recipient's own DST dates (London changes two weeks after New York)", func() {
			got := day.ReleaseFor("+447700900123", nil, at(london, "2027-03-27 22:00:00"))
			Expect(got.UTC()).To(Equal(time.Date(2027, 3, 28, 7, 0, 0, 0, time.UTC)), "08:00 BST")
		})

		It("opens a window that starts in the skipped hour when the clock is next in it", func() {
			early := service.QuietHours{Start: 2*60 + 30, End: 21 * 60}
			got := early.ReleaseFor(nyHandset, nil, at(newYork, "2027-03-13 22:00:00"))
			Expect(got.UTC()).To(Equal(time.Date(2027, 3, 14, 7, 0, 0, 0, time.UTC)), "03:00 EDT, the first minute after 02:30 that the clock shows")
		})
	})

	Describe("a number that maps to several zones", func() {
		const idaho = "+12085550100" // America/Boise and America/Los_Angeles
		boise, la := zone("America/Boise"), zone("America/Los_Angeles")

		It("waits until the window is open in every zone when the account's zone is not one of them", func() {
			// 07:30 in Los Angeles is 08:30 in Boise: open in Boise, not yet in Los Angeles.
			t := at(la, "2027-06-15 07:30:00")
			Expect(day.ReleaseFor(idaho, nil, t)).To(BeTemporally("==", at(la, "2027-06-15 08:00:00")))
			Expect(day.ReleaseFor(idaho, newYork, t)).To(BeTemporally("==", at(la, "2027-06-15 08:00:00")))
		})

		It("takes the account's time zone when it is one of them", func() {
			t := at(la, "2027-06-15 07:30:00")
			Expect(day.ReleaseFor(idaho, boise, t)).To(BeTemporally("==", t))
		})

		It("finds the common window of a number of many zones (toll-free: Guam to Pago Pago)", func() {
			// 23:00 in New York: the next instant at which every zone of +1 800 is between 08:00
			// and 21:00 is 08:00 in Guam, 22:00 UTC (18:00 in New York, 11:00 in Pago Pago).
			t := at(newYork, "2027-06-15 23:00:00")
			Expect(day.ReleaseFor("+18005550100", nil, t).UTC()).To(Equal(time.Date(2027, 6, 16, 22, 0, 0, 0, time.UTC)))
			Expect(day.ReleaseFor("+18005550100", newYork, t)).To(BeTemporally("==", at(newYork, "2027-06-16 08:00:00")), "the account's zone is one of them")
		})

		It("takes the account's time zone when the zones have no common window, and holds nothing without one", func() {
			office := service.QuietHours{Start: 9 * 60, End: 17 * 60} // New York's and Guam's never meet
			t := at(london, "2027-06-15 23:00:00")
			Expect(office.ReleaseFor("+18005550100", london, t)).To(BeTemporally("==", at(london, "2027-06-16 09:00:00")))
			Expect(office.ReleaseFor("+18005550100", nil, t)).To(BeTemporally("==", t))
		})

		It("takes the account's time zone for a number of no known zone, and holds nothing without one", func() {
			t := at(newYork, "2027-06-15 23:00:00")
			Expect(day.ReleaseFor("+99912345678", newYork, t)).To(BeTemporally("==", at(newYork, "2027-06-16 08:00:00")))
			Expect(day.ReleaseFor("+99912345678", nil, t)).To(BeTemporally("==", t))
		})
	})

	It("starts a new account at the default window (stored as minutes)", func() {
		a := &store.Account{}
		Expect(service.QuietHoursChange{}.Apply(a)).To(Succeed())
		Expect(a.QuietHours).To(BeFalse())
		Expect([]int{a.QuietHoursStart, a.QuietHoursEnd}).To(Equal([]int{480, 1260}))
	})

	It("changes only the fields given, and checks the window the change leaves", func() {
		on, ten := true, "10:00"
		a := &store.Account{QuietHoursStart: 480, QuietHoursEnd: 1260}
		Expect(service.QuietHoursChange{Enabled: &on}.Apply(a)).To(Succeed())
		Expect(a.QuietHours).To(BeTrue())
		Expect(service.QuietHoursChange{Start: &ten}.Apply(a)).To(Succeed())
		Expect([]int{a.QuietHoursStart, a.QuietHoursEnd}).To(Equal([]int{600, 1260}))
		nine := "21:00"
		err := service.QuietHoursChange{Start: &nine}.Apply(a)
		Expect(err).To(HaveOccurred())
		Expect(err.(*service.Error).Detail).To(HaveKey("quiet_hours.end"))
		Expect([]int{a.QuietHoursStart, a.QuietHoursEnd}).To(Equal([]int{600, 1260}), "a refused change leaves the account as it was")
	})
})
