package twilio_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.jetify.com/typeid"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/carriertest"
	"github.com/switchboard/switchboard/carriers/twilio"
	"github.com/switchboard/switchboard/carriers/twilio/twiliotest"
)

// reference returns a fresh message id.
func reference() string { return typeid.Must(typeid.WithPrefix("msg")).String() }

// outbound is a message to a handset.
func outbound(to string) carriers.Outbound {
	return carriers.Outbound{Reference: reference(), From: "+18335550100", To: to, Body: "Your car is ready.", Encoding: "gsm7", Segments: 1}
}

// receiptOf waits for the one receipt about reference.
func receiptOf(reference string) carriers.Receipt {
	var got []carriers.Receipt
	EventuallyWithOffset(1, func() []carriers.Receipt {
		got = nil
		for _, r := range reports.Reports() {
			if r.Receipt != nil && r.Receipt.Reference == reference {
				got = append(got, *r.Receipt)
			}
		}
		return got
	}).Should(HaveLen(1))
	return got[0]
}

// handsetSeq numbers the handsets that specs configure the fake for.
var handsetSeq atomic.Int64

// handset returns a handset number no other spec uses.
func handset() string { return fmt.Sprintf("+1646%07d", handsetSeq.Add(1)) }

// reportsSince returns the reports accepted after the first n.
func reportsSince(n int) []carriers.Report { return reports.Reports()[n:] }

var _ = Describe("Twilio signatures", func() {
	// Twilio's published test vector (auth token 12345), as its libraries test it.
	const token, vectorURL = "12345", "https://mycompany.com/myapp.php?foo=1&bar=2"
	params := url.Values{"CallSid": {"CA1234567890ABCDE"}, "Caller": {"+14158675309"}, "Digits": {"1234"},
		"From": {"+14158675309"}, "To": {"+18005551212"}}

	It("computes Twilio's published test vector", func() {
		Expect(twilio.Signature(token, vectorURL, params)).To(Equal("RSOYDt4T1cUTdK1PDd93/VVr8B8="))
	})

	DescribeTable("accepts the vector's URL with or without a port, as Twilio's libraries do",
		func(u, signature string) { Expect(twilio.ValidSignature(token, u, params, signature)).To(BeTrue()) },
		Entry("as signed", vectorURL, "RSOYDt4T1cUTdK1PDd93/VVr8B8="),
		Entry("received on a port, signed without it", "https://mycompany.com:1234/myapp.php?foo=1&bar=2", "RSOYDt4T1cUTdK1PDd93/VVr8B8="),
		Entry("signed with the default port", vectorURL, "kvajT1Ptam85bY51eRf/AJRuM3w="),
	)

	DescribeTable("refuses",
		func(u string, p url.Values, signature string) {
			Expect(twilio.ValidSignature(token, u, p, signature)).To(BeFalse())
		},
		Entry("no signature", vectorURL, params, ""),
		Entry("a wrong signature", vectorURL, params, "WRONG SIGNATURE"),
		Entry("another URL", "https://mycompany.com/myapp.php?foo=1&bar=3", params, "RSOYDt4T1cUTdK1PDd93/VVr8B8="),
		Entry("changed parameters", vectorURL, url.Values{"CallSid": {"CA1234567890ABCDE"}}, "RSOYDt4T1cUTdK1PDd93/VVr8B8="),
	)
})

var _ = Describe("Twilio callbacks", func() {
	statusURL := publicURL + twilio.CallbackPath + "/messages/status?reference=msg_x"
	const messageSid, callSid = "SM00000000000000000000000000000001", "CA00000000000000000000000000000001"
	params := url.Values{"MessageSid": {messageSid}, "CallSid": {callSid}, "MessageStatus": {"delivered"}, "CallStatus": {"completed"}}
	// about is whether a report could have come from the refused callback. Other reports arrive
	// meanwhile from earlier specs (registration polls, the fake's status callbacks), so the
	// spec looks only for these.
	about := func(r carriers.Report) bool {
		return (r.Receipt != nil && (r.Receipt.Reference == "msg_x" || r.Receipt.CarrierID == messageSid)) ||
			(r.Inbound != nil && r.Inbound.CarrierID == messageSid) || (r.Call != nil && r.Call.CarrierID == callSid)
	}

	DescribeTable("refuses with 403, reporting nothing, a callback",
		func(u string, signature func(u string) string) {
			before := len(reports.Reports())
			cb := fake.PostSigned(u, params, signature(u))
			Expect(cb.Status).To(Equal(http.StatusForbidden))
			Consistently(func() []carriers.Report { return reportsSince(before) }, "200ms").ShouldNot(ContainElement(Satisfy(about)))
		},
		Entry("without a signature", statusURL, func(string) string { return "" }),
		Entry("with a wrong signature", statusURL, func(string) string { return "RSOYDt4T1cUTdK1PDd93/VVr8B8=" }),
		Entry("signed with another auth token", statusURL, func(u string) string { return twilio.Signature("another", u, params) }),
		Entry("signed for another URL", statusURL, func(u string) string { return twilio.Signature(twiliotest.AuthToken, u+"2", params) }),
		Entry("of an inbound message, unsigned", publicURL+twilio.CallbackPath+"/messages/inbound", func(string) string { return "" }),
		Entry("of a call, unsigned", publicURL+twilio.CallbackPath+"/voice/status", func(string) string { return "" }),
	)

	It("reports nothing for the steps before a final status", func() {
		before := len(reports.Reports())
		for _, s := range []string{"queued", "sending", "sent", "accepted"} {
			Expect(fake.Post(statusURL, url.Values{"MessageSid": {"SM1"}, "MessageStatus": {s}}).Status).To(Equal(http.StatusNoContent))
		}
		Expect(reportsSince(before)).To(BeEmpty())
	})

	It("reports an inbound message with its media and answers empty TwiML", func() {
		before := len(reports.Reports())
		cb := fake.Inbound(publicURL+twilio.CallbackPath+"/messages/inbound", "+14155550123", "+18335550100", "Hello there",
			"https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1")
		Expect(cb.Status).To(Equal(http.StatusOK))
		Expect(cb.Body).To(ContainSubstring("<Response></Response>"))
		got := reportsSince(before)
		Expect(got).To(HaveLen(1))
		Expect(got[0].Carrier).To(Equal(twilio.Name))
		Expect(*got[0].Inbound).To(SatisfyAll(
			HaveField("CarrierID", cb.Params.Get("MessageSid")), HaveField("From", "+14155550123"), HaveField("To", "+18335550100"),
			HaveField("Body", "Hello there"), HaveField("At", Not(BeZero())),
			HaveField("Media", ConsistOf(carriers.Media{URL: "https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1", ContentType: "image/jpeg"})),
		))
	})
})

var _ = Describe("Twilio messaging", func() {
	It("posts To, From, Body, every MediaUrl and a StatusCallback naming the reference", func(ctx SpecContext) {
		o := outbound("+14155550150")
		o.Media = []carriers.Media{{URL: "https://switchboard.test/files/a"}, {URL: "https://switchboard.test/files/b"}}
		sub, err := carrier.Submit(ctx, o)
		Expect(err).NotTo(HaveOccurred())
		Expect(sub.CarrierID).To(MatchRegexp(`^SM[0-9a-f]{32}$`))
		Expect(fake.MessagesTo(o.To)).To(ConsistOf(twiliotest.Message{SID: sub.CarrierID, To: o.To, From: o.From, Body: o.Body,
			MediaURLs:      []string{"https://switchboard.test/files/a", "https://switchboard.test/files/b"},
			StatusCallback: publicURL + "/carriers/twilio/messages/status?reference=" + o.Reference}))
		Expect(receiptOf(o.Reference)).To(SatisfyAll(HaveField("Status", carriers.ReceiptDelivered), HaveField("CarrierID", sub.CarrierID)))
	})

	DescribeTable("maps an undelivered message's error code to a failure reason",
		func(ctx SpecContext, code int, reason string) {
			o := outbound(handset())
			fake.FailTo(o.To, code)
			_, err := carrier.Submit(ctx, o)
			Expect(err).NotTo(HaveOccurred())
			Expect(receiptOf(o.Reference)).To(SatisfyAll(HaveField("Status", carriers.ReceiptFailed), HaveField("FailureReason", reason)))
		},
		Entry("30003 unreachable handset", 30003, carriers.FailureUnreachableCarrier),
		Entry("30005 unknown handset", 30005, carriers.FailureInvalidMobileNumber),
		Entry("30006 landline", 30006, carriers.FailureLandline),
		Entry("30007 filtered by the carrier", 30007, carriers.FailureCarrierFiltered),
		Entry("30004 blocked by the handset", 30004, carriers.FailureOptedOutAtCarrier),
		Entry("30034 unregistered 10DLC number", 30034, carriers.FailureCarrierFiltered),
		Entry("30008 unknown error", 30008, carriers.FailureUnknown),
		Entry("a code it does not know", 39999, carriers.FailureUnknown),
	)

	DescribeTable("refuses a message permanently when Twilio answers 400",
		func(ctx SpecContext, code int, reason string) {
			o := outbound(handset())
			fake.RefuseTo(o.To, code)
			_, err := carrier.Submit(ctx, o)
			var refused *carriers.SubmitError
			Expect(err).To(BeAssignableToTypeOf(refused))
			Expect(err.(*carriers.SubmitError)).To(SatisfyAll(HaveField("Permanent", true), HaveField("Reason", reason)))
			again, err := carrier.Submit(ctx, o)
			Expect(err).To(HaveOccurred(), "a refused reference is no submission")
			Expect(again.Duplicate).To(BeFalse())
		},
		Entry("21211 invalid To", 21211, carriers.FailureInvalidMobileNumber),
		Entry("21610 unsubscribed recipient", 21610, carriers.FailureOptedOutAtCarrier),
		Entry("21614 not a mobile number", 21614, carriers.FailureLandline),
		Entry("21606 From is not ours", 21606, carriers.FailureUnknown),
	)

	It("answers a temporary error when Twilio cannot be reached", func(ctx SpecContext) {
		down, err := twilio.New(twilio.Config{AccountSID: twiliotest.AccountSID, AuthToken: twiliotest.AuthToken,
			APIBase: "http://127.0.0.1:1", PublicURL: publicURL, Store: st.Twilio(), Reporter: reports})
		Expect(err).NotTo(HaveOccurred())
		_, err = down.Submit(ctx, outbound("+14155550199"))
		var refused *carriers.SubmitError
		Expect(err).To(BeAssignableToTypeOf(refused))
		Expect(err.(*carriers.SubmitError).Permanent).To(BeFalse())
	})
})

var _ = Describe("Twilio numbers", func() {
	It("points a bought number's messaging and voice webhooks at the adapter's callbacks", func(ctx SpecContext) {
		Expect(carrier.ProvisionNumber(ctx, "+16175550142")).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(carrier.ReleaseNumber(ctx, "+16175550142")).To(Succeed()) })
		Expect(fake.Owned("+16175550142")).To(HaveValue(SatisfyAll(
			HaveField("SmsURL", publicURL+"/carriers/twilio/messages/inbound"),
			HaveField("VoiceURL", publicURL+"/carriers/twilio/voice"),
			HaveField("StatusCallback", publicURL+"/carriers/twilio/voice/status"))))
	})

	It("leaves out the 800 numbers Twilio offers in a toll-free search", func(ctx SpecContext) {
		found, err := carrier.SearchNumbers(ctx, carriers.NumberQuery{Country: "US", Type: "toll_free", Limit: 5})
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(HaveLen(5))
		Expect(found).To(HaveEach(HaveField("Number", HavePrefix("+1833"))))
	})

	It("asks for local numbers near a place with NearLatLong and offers them nearest first", func(ctx SpecContext) {
		found, err := carrier.SearchNumbers(ctx, carriers.NumberQuery{Type: "local",
			Near: &carriers.Location{Latitude: 37.8, Longitude: -122.27}, Limit: 150})
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(HaveLen(150))
		Expect(found[0].Number).To(HavePrefix("+1510"), "Oakland's numbers before San Francisco's")
		Expect(found[100].Number).To(HavePrefix("+1415"))
		Expect(found).To(HaveEach(HaveField("Country", "US")))
		Expect(fake.Violations()).To(BeEmpty())
	})

	It("offers nothing in a country Twilio has no numbers in", func(ctx SpecContext) {
		Expect(carrier.SearchNumbers(ctx, carriers.NumberQuery{Country: "ZZ", Type: "local"})).To(BeEmpty())
	})
})

var _ = Describe("Twilio voice", func() {
	voice := publicURL + twilio.CallbackPath + "/voice"
	call := func() url.Values {
		return url.Values{"CallSid": {"CA" + typeid.Must(typeid.WithPrefix("x")).Suffix()}, "AccountSid": {twiliotest.AccountSID},
			"From": {"+14155550123"}, "To": {"+18335550100"}, "Direction": {"inbound"}, "CallStatus": {"ringing"}}
	}
	calls := func(sid string) []carriers.CallEvent {
		var out []carriers.CallEvent
		for _, r := range reports.Reports() {
			if r.Call != nil && r.Call.CarrierID == sid {
				out = append(out, *r.Call)
			}
		}
		return out
	}

	It("answers a call with a voicemail recorder and reports it ringing, missed, then its voicemail", func(ctx SpecContext) {
		p := call()
		sid := p.Get("CallSid")
		cb := fake.Post(voice, p)
		Expect(cb.Status).To(Equal(http.StatusOK))
		Expect(cb.Body).To(SatisfyAll(ContainSubstring("<Record "), ContainSubstring(`recordingStatusCallback="`+voice+`/recording"`)))

		p.Set("CallStatus", "completed")
		p.Set("CallDuration", "17")
		Expect(fake.Post(voice+"/status", p).Status).To(Equal(http.StatusNoContent))

		rec := fake.RecordingURL()
		Expect(fake.Post(voice+"/recording", url.Values{"CallSid": {sid}, "AccountSid": {twiliotest.AccountSID}, "RecordingSid": {"RE1"},
			"RecordingUrl": {rec}, "RecordingStatus": {"completed"}, "RecordingDuration": {"9"}, "From": {"+14155550123"},
			"To": {"+18335550100"}}).Status).To(Equal(http.StatusNoContent))

		Expect(calls(sid)).To(HaveExactElements(
			HaveField("Status", carriers.CallRinging),
			SatisfyAll(HaveField("Status", carriers.CallMissed), HaveField("Duration", 17), HaveField("RecordingURL", "")),
			SatisfyAll(HaveField("Status", carriers.CallMissed), HaveField("RecordingURL", rec), HaveField("RecordingSeconds", 9), HaveField("Voicemail", true)),
		))
		a, err := carrier.FetchRecording(ctx, rec)
		Expect(err).NotTo(HaveOccurred())
		Expect(a).To(Equal(carriers.Audio{ContentType: "audio/wav", Data: twiliotest.RecordingWAV}))
	})

	DescribeTable("maps Twilio's call statuses",
		func(twilioStatus, ours string) {
			p := call()
			p.Set("CallStatus", twilioStatus)
			fake.Post(voice+"/status", p)
			Expect(calls(p.Get("CallSid"))).To(ConsistOf(HaveField("Status", ours)))
		},
		Entry(nil, "busy", carriers.CallBusy),
		Entry(nil, "no-answer", carriers.CallNoAnswer),
		Entry(nil, "canceled", carriers.CallCanceled),
		Entry(nil, "failed", carriers.CallFailed),
		Entry(nil, "in-progress", carriers.CallInProgress),
	)

	It("sends its credentials only to the account's own recordings", func(ctx SpecContext) {
		for _, u := range []string{"https://evil.example/2010-04-01/Accounts/" + twiliotest.AccountSID + "/Recordings/RE1",
			fake.URL + "/2010-04-01/Accounts/ACother/Recordings/RE1", fake.URL + "/2010-04-01/Accounts/" + twiliotest.AccountSID + "/Recordings/RE1/../x"} {
			_, err := carrier.FetchRecording(ctx, u)
			Expect(err).To(HaveOccurred(), u)
		}
	})
})

var _ = Describe("Twilio configuration", func() {
	DescribeTable("refuses",
		func(cfg twilio.Config, says string) {
			cfg.Store, cfg.Reporter = st.Twilio(), carriertest.NewRecorder()
			_, err := twilio.New(cfg)
			Expect(err).To(MatchError(ContainSubstring(says)))
		},
		Entry("no account SID", twilio.Config{AuthToken: "t", PublicURL: publicURL}, "account SID"),
		Entry("a malformed account SID", twilio.Config{AccountSID: "SK123", AuthToken: "t", PublicURL: publicURL}, "account SID"),
		Entry("an account SID of AC and 32 characters that are not hexadecimal",
			twilio.Config{AccountSID: "ACzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", AuthToken: "t", PublicURL: publicURL}, "account SID"),
		Entry("an account SID of AC and 31 hexadecimal digits", twilio.Config{AccountSID: twiliotest.AccountSID[:33], AuthToken: "t", PublicURL: publicURL}, "account SID"),
		Entry("no auth token", twilio.Config{AccountSID: twiliotest.AccountSID, PublicURL: publicURL}, "auth token"),
		Entry("a relative API base", twilio.Config{AccountSID: twiliotest.AccountSID, AuthToken: "t", APIBase: "api.twilio.com", PublicURL: publicURL}, "API base"),
		Entry("no public URL", twilio.Config{AccountSID: twiliotest.AccountSID, AuthToken: "t"}, "public URL"),
	)

	It("says nothing of its auth token in its errors", func(ctx SpecContext) {
		// Twilio's answer to wrong credentials.
		refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code": 20003, "message": "Authenticate", "status": 401}`))
		}))
		DeferCleanup(refusing.Close)
		c, err := twilio.New(twilio.Config{AccountSID: twiliotest.AccountSID, AuthToken: "s3cr3t-token", APIBase: refusing.URL,
			PublicURL: publicURL, Store: st.Twilio(), Reporter: reports, HTTPClient: &http.Client{Timeout: time.Second}})
		Expect(err).NotTo(HaveOccurred())
		_, err = c.Submit(ctx, outbound("+14155550160"))
		Expect(err).To(MatchError(ContainSubstring("20003")))
		Expect(err.(*carriers.SubmitError).Permanent).To(BeFalse(), "wrong credentials are an operator's to fix, not the message's fault")
		Expect(err.Error()).NotTo(ContainSubstring("s3cr3t-token"))
	})
})

var _ = Describe("Twilio registration", func() {
	// verdictOf waits for the one verdict about reference.
	verdictOf := func(reference string) carriers.Verdict {
		var got []carriers.Verdict
		EventuallyWithOffset(1, func() []carriers.Verdict {
			got = reports.Verdicts(reference)
			return got
		}).Should(HaveLen(1))
		return got[0]
	}

	It("rejects a campaign whose account lacks what Twilio registers a brand with, naming the fields", func(ctx SpecContext) {
		c := carriertest.Campaign("Acme Dental sends appointment reminders.")
		c.Brand = carriers.Brand{Name: "Acme", RegisteredName: "Acme Dental LLC", Type: "llc", Industry: "healthcare"}
		Expect(carrier.SubmitCampaign(ctx, c)).To(Succeed())
		Expect(verdictOf(c.Reference)).To(SatisfyAll(HaveField("Approved", false),
			HaveField("Reason", SatisfyAll(ContainSubstring("identifier"), ContainSubstring("address.line1"), ContainSubstring("contact.email")))))
		Expect(carrier.RegistrationSID(ctx, c.Reference)).To(BeEmpty(), "no campaign was made at Twilio")
	})

	It("takes TrustHub's signed status callbacks of the bundles it made", func(ctx SpecContext) {
		c := carriertest.Campaign("Acme Dental sends appointment reminders.")
		Expect(carrier.SubmitCampaign(ctx, c)).To(Succeed())
		verdictOf(c.Reference)
		Eventually(func() []twiliotest.Callback {
			var out []twiliotest.Callback
			for _, cb := range fake.SentCallbacks() {
				if strings.HasSuffix(cb.URL, "/trusthub/status") {
					out = append(out, cb)
				}
			}
			return out
		}).Should(ContainElement(SatisfyAll(HaveField("Status", http.StatusNoContent),
			HaveField("Params", HaveKeyWithValue("Status", ConsistOf("twilio-approved"))))))
	})

	It("keeps Twilio's reasons for rejecting a toll-free verification", func(ctx SpecContext) {
		t := carriertest.TollFree(&carriertest.Harness{TollFreeNumber: tollFreeNumber}, "Shipping notices. "+twiliotest.RejectWord)
		DeferCleanup(func(ctx SpecContext) { Expect(carrier.WithdrawCampaign(ctx, t.Reference)).To(Succeed()) })
		Expect(carrier.SubmitTollFreeVerification(ctx, t)).To(Succeed())
		Expect(verdictOf(t.Reference).Reason).To(ContainSubstring("Opt-in information is not clear (30509)"))
	})

	It("adds an assigned number to its campaign's Messaging Service, sends through it, and takes it off again", func(ctx SpecContext) {
		number := "+16175550142"
		Expect(carrier.ProvisionNumber(ctx, number)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(carrier.ReleaseNumber(ctx, number)).To(Succeed()) })
		c := carriertest.Campaign("Acme Dental sends appointment reminders to patients who opted in.")
		Expect(carrier.SubmitCampaign(ctx, c)).To(Succeed())
		Expect(verdictOf(c.Reference)).To(HaveField("Approved", true))
		Expect(carrier.AssignNumber(ctx, c.Reference, number)).To(Succeed())
		Expect(carrier.AssignNumber(ctx, c.Reference, number)).To(Succeed(), "assigning again is no error")
		Expect(fake.ServiceNumbers()).To(ContainElement([]string{number}))

		o := outbound(handset())
		o.From = number
		_, err := carrier.Submit(ctx, o)
		Expect(err).NotTo(HaveOccurred())
		Expect(fake.MessagesTo(o.To)).To(ConsistOf(HaveField("MessagingServiceSID", HavePrefix("MG"))))

		Expect(carrier.UnassignNumber(ctx, c.Reference, number)).To(Succeed())
		Expect(fake.ServiceNumbers()).NotTo(ContainElement(ContainElement(number)))
		o = outbound(handset())
		o.From = number
		_, err = carrier.Submit(ctx, o)
		Expect(err).NotTo(HaveOccurred())
		Expect(fake.MessagesTo(o.To)).To(ConsistOf(HaveField("MessagingServiceSID", "")))
	})
})
