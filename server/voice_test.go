package server_test

import (
	"context"
	"encoding/binary"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

var _ = Describe("Voice", func() {
	var (
		t       *tenant
		account string
		pnID    string
		number  string
		handset string
		carrier *sim.Carrier
	)
	BeforeEach(func() {
		t = newTenant()
		account = t.createAccount("Acme Dental")
		pnID, number = t.addNumber(account, numberSetup{})
		handset = newHandset()
		c, err := core.Carriers.Get(sim.Name)
		Expect(err).NotTo(HaveOccurred())
		carrier = c.(*sim.Carrier)
	})

	// place makes the handset call the account's number through the simulated carrier and
	// returns the call as the API shows it.
	place := func(call sim.Call) map[string]any {
		call.From, call.To = handset, number
		id, err := carrier.PlaceCall(context.Background(), call)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		c, err := st.CallByCarrierID(context.Background(), sim.Name, id)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		r := t.get("/calls/" + c.ID)
		ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK))
		return r.JSON()
	}
	// report sends a call event through the core's inbound path, as a carrier does.
	report := func(ev carriers.CallEvent) error {
		if ev.From == "" {
			ev.From, ev.To = handset, number
		}
		if ev.At.IsZero() {
			ev.At = clock.Now()
		}
		return core.Reports.Report(context.Background(), carriers.Report{Carrier: sim.Name, Call: &ev})
	}
	// callOf returns the call a carrier id names, through the API.
	callOf := func(carrierID string) map[string]any {
		c, err := st.CallByCarrierID(context.Background(), sim.Name, carrierID)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		return t.get("/calls/" + c.ID).JSON()
	}
	list := func(path string) []any {
		r := t.get(path)
		ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK))
		return r.JSON()["data"].([]any)
	}
	// voicemail leaves a voicemail of seconds and returns the voicemail.received event's data.
	voicemail := func(seconds int) map[string]any {
		place(sim.Call{VoicemailSeconds: seconds})
		evs := t.events(webhooks.EventVoicemailReceived)
		ExpectWithOffset(1, evs).NotTo(BeEmpty())
		return evs[len(evs)-1]
	}
	// fileURL follows GET /recordings/{id}/file and returns the signed path it redirects to.
	fileURL := func(recordingID string) string {
		r := t.get("/recordings/" + recordingID + "/file")
		ExpectWithOffset(1, r).To(HaveStatus(http.StatusFound), r.String())
		u, err := url.Parse(r.Header.Get("Location"))
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		ExpectWithOffset(1, u.Scheme+"://"+u.Host).To(Equal("https://switchboard.test"))
		return u.Path
	}
	anonymous := func() *tenant { return t.withKey("") }

	Describe("calls", func() {
		It("records an answered call as completed, with the caller's new contact, and emits call.ended once", func() {
			c := place(sim.Call{Answered: true, TalkSeconds: 42})
			Expect(c).To(SatisfyAll(
				HaveKeyWithValue("id", MatchRegexp(`^call_[0-7][0-9a-hjkmnp-tv-z]{25}$`)),
				HaveKeyWithValue("status", "completed"), HaveKeyWithValue("duration", BeEquivalentTo(sim.RingSeconds+42)),
				HaveKeyWithValue("from", handset), HaveKeyWithValue("to", number), HaveKeyWithValue("phone_number_id", pnID),
				HaveKeyWithValue("contact", SatisfyAll(HaveKeyWithValue("phone_number", handset), HaveKeyWithValue("opted_out", false))),
			))
			initiated, err := time.Parse(time.RFC3339Nano, c["initiated_at"].(string))
			Expect(err).NotTo(HaveOccurred())
			Expect(initiated).To(BeTemporally("~", clock.Now().Add(-(sim.RingSeconds+42)*time.Second), 5*time.Second))

			contact := t.get("/contacts/" + c["contact"].(map[string]any)["id"].(string))
			Expect(contact).To(HaveStatus(http.StatusOK))
			Expect(t.eventsFor(webhooks.EventCallEnded, c["id"].(string))).To(ConsistOf(Equal(c)), "call.ended carries the call as the API shows it")
			Expect(list("/accounts/" + account + "/recordings")).To(BeEmpty())
			Expect(list("/accounts/" + account + "/voicemails")).To(BeEmpty())
		})

		It("records an unanswered call without a voicemail as no_answer", func() {
			c := place(sim.Call{})
			Expect(c).To(SatisfyAll(HaveKeyWithValue("status", "no_answer"), HaveKeyWithValue("duration", BeEquivalentTo(sim.RingSeconds))))
			Expect(t.eventsFor(webhooks.EventCallEnded, c["id"].(string))).To(HaveLen(1))
			Expect(t.events(webhooks.EventVoicemailReceived)).To(BeEmpty())
		})

		DescribeTable("keeps each status a carrier reports, and emits call.ended only for a final one",
			func(status string, final bool) {
				id := store.NewID("carriercall")
				Expect(report(carriers.CallEvent{CarrierID: id, Status: status, Duration: 7})).To(Succeed())
				c := callOf(id)
				Expect(c).To(HaveKeyWithValue("status", status))
				ended := t.eventsFor(webhooks.EventCallEnded, c["id"].(string))
				if !final {
					Expect(ended).To(BeEmpty())
					Expect(c).To(HaveKeyWithValue("duration", BeEquivalentTo(0)))
					return
				}
				Expect(ended).To(ConsistOf(HaveKeyWithValue("status", status)))
				Expect(c).To(HaveKeyWithValue("duration", BeEquivalentTo(7)))
			},
			Entry("queued", carriers.CallQueued, false),
			Entry("ringing", carriers.CallRinging, false),
			Entry("in_progress", carriers.CallInProgress, false),
			Entry("completed", carriers.CallCompleted, true),
			Entry("busy", carriers.CallBusy, true),
			Entry("no_answer", carriers.CallNoAnswer, true),
			Entry("missed", carriers.CallMissed, true),
			Entry("canceled", carriers.CallCanceled, true),
			Entry("failed", carriers.CallFailed, true),
		)

		It("moves a call forward only: repeated, late and out-of-order reports change nothing", func() {
			id := store.NewID("carriercall")
			start := clock.Now().Add(-time.Minute)
			Expect(report(carriers.CallEvent{CarrierID: id, Status: carriers.CallRinging, At: start})).To(Succeed())
			Expect(callOf(id)).To(HaveKeyWithValue("status", "ringing"))
			Expect(report(carriers.CallEvent{CarrierID: id, Status: carriers.CallInProgress, At: start.Add(5 * time.Second)})).To(Succeed())
			Expect(callOf(id)).To(HaveKeyWithValue("status", "in_progress"))
			Expect(report(carriers.CallEvent{CarrierID: id, Status: carriers.CallCompleted, At: start.Add(time.Minute)})).To(Succeed())
			Expect(report(carriers.CallEvent{CarrierID: id, Status: carriers.CallRinging, At: start})).To(Succeed())
			Expect(report(carriers.CallEvent{CarrierID: id, Status: carriers.CallFailed})).To(Succeed())
			Expect(report(carriers.CallEvent{CarrierID: id, Status: carriers.CallCompleted, At: start.Add(time.Minute)})).To(Succeed())
			c := callOf(id)
			Expect(c).To(SatisfyAll(HaveKeyWithValue("status", "completed"), HaveKeyWithValue("duration", BeEquivalentTo(60))),
				"without a reported duration, a call lasts from its first report to its end")
			Expect(t.eventsFor(webhooks.EventCallEnded, c["id"].(string))).To(HaveLen(1))
			Expect(list("/accounts/" + account + "/calls")).To(HaveLen(1))
		})

		It("records calls from an opted-out contact, under that contact", func(ctx SpecContext) {
			r := t.post("/accounts/"+account+"/contacts", map[string]any{"phone_number": handset, "first_name": "Mia"})
			Expect(r).To(HaveStatus(http.StatusCreated))
			contactID := r.JSON()["id"].(string)
			Expect(st.SetContactOptedOut(ctx, contactID, true, time.Now())).To(Succeed())
			c := place(sim.Call{VoicemailSeconds: 1})
			Expect(c).To(HaveKeyWithValue("contact", SatisfyAll(
				HaveKeyWithValue("id", contactID), HaveKeyWithValue("first_name", "Mia"), HaveKeyWithValue("opted_out", true))))
			Expect(t.events(webhooks.EventVoicemailReceived)).To(HaveLen(1))
		})

		It("finds the caller's contact again on the next call", func() {
			first := place(sim.Call{Answered: true})
			second := place(sim.Call{})
			Expect(second["contact"]).To(Equal(first["contact"]))
			Expect(list("/accounts/" + account + "/contacts")).To(HaveLen(1))
		})

		It("ignores a call to a number no account holds, without an error that makes the carrier retry", func() {
			Expect(report(carriers.CallEvent{CarrierID: store.NewID("carriercall"), From: handset, To: newNumber(),
				Status: carriers.CallMissed, RecordingURL: sim.RecordingURL(1, "x"), RecordingSeconds: 1, Voicemail: true})).To(Succeed())
			Expect(report(carriers.CallEvent{CarrierID: store.NewID("carriercall"), From: handset, To: "+18335550000",
				Status: carriers.CallCompleted})).To(Succeed(), "the demo number belongs to no account")
			Expect(list("/accounts/" + account + "/calls")).To(BeEmpty())
			Expect(t.events(webhooks.EventCallEnded)).To(BeEmpty())
			Expect(t.events(webhooks.EventVoicemailReceived)).To(BeEmpty())
		})

		It("lists an account's calls newest first, page by page", func() {
			var ids []string
			for range 3 {
				ids = append(ids, place(sim.Call{Answered: true})["id"].(string))
			}
			sort.Sort(sort.Reverse(sort.StringSlice(ids)))
			r := t.get("/accounts/" + account + "/calls?limit=2")
			Expect(r).To(HaveStatus(http.StatusOK))
			var page1 struct {
				Data       []map[string]any `json:"data"`
				Pagination struct {
					NextCursor     *string `json:"next_cursor"`
					PreviousCursor *string `json:"previous_cursor"`
				} `json:"pagination"`
			}
			r.Into(&page1)
			Expect(page1.Data).To(HaveLen(2))
			Expect([]any{page1.Data[0]["id"], page1.Data[1]["id"]}).To(Equal([]any{ids[0], ids[1]}))
			Expect(page1.Pagination.PreviousCursor).To(BeNil())
			Expect(page1.Pagination.NextCursor).NotTo(BeNil())
			page2 := t.get("/accounts/" + account + "/calls?limit=2&after=" + *page1.Pagination.NextCursor).JSON()
			Expect(page2["data"]).To(HaveExactElements(HaveKeyWithValue("id", ids[2])))
			Expect(page2["pagination"]).To(HaveKeyWithValue("next_cursor", BeNil()))
		})
	})

	Describe("voicemails and recordings", func() {
		It("leaves a voicemail on a missed call: call.ended, recording.completed and voicemail.received", func() {
			c := place(sim.Call{VoicemailSeconds: 3})
			Expect(c).To(SatisfyAll(HaveKeyWithValue("status", "missed"), HaveKeyWithValue("duration", BeEquivalentTo(sim.RingSeconds+3))))
			Expect(t.eventsFor(webhooks.EventCallEnded, c["id"].(string))).To(ConsistOf(Equal(c)))

			vm := t.events(webhooks.EventVoicemailReceived)
			Expect(vm).To(HaveLen(1))
			Expect(vm[0]).To(SatisfyAll(HaveLen(4),
				HaveKeyWithValue("id", MatchRegexp(`^vml_[0-7][0-9a-hjkmnp-tv-z]{25}$`)),
				HaveKeyWithValue("recording_id", MatchRegexp(`^rec_[0-7][0-9a-hjkmnp-tv-z]{25}$`)),
				HaveKeyWithValue("duration", BeEquivalentTo(3)), HaveKeyWithValue("call", Equal(c))))
			Expect(vm[0]["call"]).To(SatisfyAll(HaveLen(8), HaveKeyWithValue("from", handset), HaveKeyWithValue("to", number),
				HaveKeyWithValue("phone_number_id", pnID)))

			rec := t.events(webhooks.EventRecordingCompleted)
			Expect(rec).To(HaveLen(1))
			Expect(rec[0]).To(Equal(map[string]any{"id": vm[0]["recording_id"], "duration": float64(3), "call": c}))

			got := t.get("/voicemails/" + vm[0]["id"].(string))
			Expect(got).To(HaveStatus(http.StatusOK))
			Expect(got.JSON()).To(SatisfyAll(HaveKeyWithValue("recording_id", vm[0]["recording_id"]),
				HaveKeyWithValue("duration", BeEquivalentTo(3)), HaveKeyWithValue("call", Equal(c)), HaveKey("created_at")))
			Expect(list("/accounts/" + account + "/voicemails")).To(ConsistOf(Equal(got.JSON())))
		})

		It("follows voicemail.received up through GET /recordings/{recording_id}", func() {
			vm := voicemail(4)
			r := t.get("/recordings/" + vm["recording_id"].(string))
			Expect(r).To(HaveStatus(http.StatusOK), r.String())
			Expect(r.JSON()).To(SatisfyAll(
				HaveKeyWithValue("id", vm["recording_id"]), HaveKeyWithValue("duration", BeEquivalentTo(4)),
				HaveKeyWithValue("call", Equal(vm["call"])), HaveKeyWithValue("status", "completed"), HaveKey("created_at"),
			))
			Expect(r.JSON()["call"]).To(HaveKeyWithValue("contact", HaveKeyWithValue("phone_number", handset)))
			Expect(list("/accounts/" + account + "/recordings")).To(ConsistOf(Equal(r.JSON())))
		})

		It("stores a recording of an answered call without a voicemail", func() {
			id := store.NewID("carriercall")
			Expect(report(carriers.CallEvent{CarrierID: id, Status: carriers.CallCompleted, Duration: 20,
				RecordingURL: sim.RecordingURL(2, id), RecordingSeconds: 2})).To(Succeed())
			Expect(t.events(webhooks.EventRecordingCompleted)).To(ConsistOf(HaveKeyWithValue("call", Equal(callOf(id)))))
			Expect(t.events(webhooks.EventVoicemailReceived)).To(BeEmpty())
			Expect(list("/accounts/" + account + "/voicemails")).To(BeEmpty())
		})

		It("stores a recording reported again once, even after it was deleted", func() {
			id := store.NewID("carriercall")
			ev := carriers.CallEvent{CarrierID: id, Status: carriers.CallMissed, Duration: 9,
				RecordingURL: sim.RecordingURL(2, id), RecordingSeconds: 2, Voicemail: true}
			Expect(report(ev)).To(Succeed())
			Expect(report(ev)).To(Succeed())
			recs := list("/accounts/" + account + "/recordings")
			Expect(recs).To(HaveLen(1))
			Expect(t.events(webhooks.EventVoicemailReceived)).To(HaveLen(1))
			Expect(t.delete("/recordings/" + recs[0].(map[string]any)["id"].(string))).To(HaveStatus(http.StatusOK))
			Expect(report(ev)).To(Succeed())
			Expect(list("/accounts/" + account + "/recordings")).To(BeEmpty())
			Expect(t.events(webhooks.EventRecordingCompleted)).To(HaveLen(1))
		})

		It("refuses a report whose recording the carrier cannot give, so that it is reported again", func() {
			id := store.NewID("carriercall")
			ev := carriers.CallEvent{CarrierID: id, Status: carriers.CallMissed, RecordingURL: "sim-recording:nope", Voicemail: true}
			Expect(report(ev)).NotTo(Succeed())
			Expect(list("/accounts/"+account+"/calls")).To(BeEmpty(), "nothing is half-stored")
			ev.RecordingURL, ev.RecordingSeconds = sim.RecordingURL(1, id), 1
			Expect(report(ev)).To(Succeed())
			Expect(list("/accounts/" + account + "/voicemails")).To(HaveLen(1))
		})

		It("lists recordings and voicemails newest first, page by page", func() {
			var recs, vms []string
			for i := range 3 {
				vm := voicemail(i + 1)
				recs, vms = append(recs, vm["recording_id"].(string)), append(vms, vm["id"].(string))
			}
			for path, ids := range map[string][]string{"recordings": recs, "voicemails": vms} {
				p1 := t.get("/accounts/" + account + "/" + path + "?limit=2").JSON()
				Expect(p1["data"]).To(HaveExactElements(HaveKeyWithValue("id", ids[2]), HaveKeyWithValue("id", ids[1])), path)
				next := p1["pagination"].(map[string]any)["next_cursor"].(string)
				p2 := t.get("/accounts/" + account + "/" + path + "?limit=2&after=" + next).JSON()
				Expect(p2["data"]).To(HaveExactElements(HaveKeyWithValue("id", ids[0])), path)
				Expect(p2["pagination"]).To(HaveKeyWithValue("next_cursor", BeNil()), path)
			}
		})
	})

	Describe("recording files", func() {
		var (
			recordingID string
			path        string
		)
		const seconds = 3
		BeforeEach(func() {
			recordingID = voicemail(seconds)["recording_id"].(string)
			path = fileURL(recordingID)
		})

		It("redirects to a signed URL that serves a WAV file of the voicemail's length without a key", func() {
			Expect(path).To(HavePrefix(service.RecordingFilePath))
			r := anonymous().get(path)
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.Header.Get("Content-Type")).To(Equal("audio/wav"))
			Expect(r.Header.Get("Accept-Ranges")).To(Equal("bytes"))
			b := r.Body
			dataLen := seconds * sim.WAVSampleRate * 2
			Expect(b).To(HaveLen(44 + dataLen))
			Expect(string(b[0:4])).To(Equal("RIFF"))
			Expect(binary.LittleEndian.Uint32(b[4:8])).To(BeEquivalentTo(36 + dataLen))
			Expect(string(b[8:16])).To(Equal("WAVEfmt "))
			Expect(binary.LittleEndian.Uint16(b[20:22])).To(BeEquivalentTo(1), "PCM")
			Expect(binary.LittleEndian.Uint16(b[22:24])).To(BeEquivalentTo(1), "mono")
			Expect(binary.LittleEndian.Uint32(b[24:28])).To(BeEquivalentTo(8000))
			Expect(binary.LittleEndian.Uint16(b[34:36])).To(BeEquivalentTo(16))
			Expect(string(b[36:40])).To(Equal("data"))
			Expect(binary.LittleEndian.Uint32(b[40:44])).To(BeEquivalentTo(dataLen))
			Expect(b[44:]).NotTo(Equal(make([]byte, dataLen)), "a tone, not silence")
		})

		It("serves the audio inline with nosniff and a sandboxing CSP; HEAD answers the same headers", func() {
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				r := anonymous().request(method, path, nil)
				Expect(r).To(HaveStatus(http.StatusOK), method)
				Expect(r.Header.Get("Content-Type")).To(Equal("audio/wav"), method)
				Expect(r.Header.Get("Content-Length")).To(Equal("48044"), method)
				Expect(r.Header.Get("Content-Disposition")).To(Equal(`inline; filename=`+recordingID+`.wav`), method)
				Expect(r.Header.Get("X-Content-Type-Options")).To(Equal("nosniff"), method)
				Expect(r.Header.Get("Content-Security-Policy")).To(Equal("default-src 'none'; sandbox"), method)
			}
			Expect(anonymous().request(http.MethodHead, path, nil).Body).To(BeEmpty())
		})

		DescribeTable("serves a recording of an active or unknown type as a download, never rendered",
			func(contentType, data string) {
				Expect(st.DB().Exec(`UPDATE recordings SET content_type = ?, data = ? WHERE id = ?`, contentType, []byte(data), recordingID).Error).To(Succeed())
				r := anonymous().get(path)
				Expect(r).To(HaveStatus(http.StatusOK))
				Expect(r.Header.Get("Content-Type")).To(Equal("application/octet-stream"))
				Expect(r.Header.Get("Content-Disposition")).To(HavePrefix("attachment;"))
				Expect(r.Header.Get("X-Content-Type-Options")).To(Equal("nosniff"))
				Expect(r.Header.Get("Content-Security-Policy")).To(Equal("default-src 'none'; sandbox"))
				Expect(string(r.Body)).To(Equal(data))
			},
			Entry("HTML", "text/html", "<script>alert(1)</script>"),
			Entry("SVG", "image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`),
			Entry("an XML audio type", "audio/x-playlist+xml", `<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>`),
			Entry("none", "", "<script>alert(1)</script>"),
		)

		It("answers a Range request with 206 and the bytes asked for", func() {
			full := anonymous().get(path).Body
			r := anonymous().get(path, "Range", "bytes=8-11")
			Expect(r).To(HaveStatus(http.StatusPartialContent))
			Expect(string(r.Body)).To(Equal("WAVE"))
			Expect(r.Header.Get("Content-Range")).To(Equal("bytes 8-11/48044"))
			r = anonymous().get(path, "Range", "bytes=-100")
			Expect(r).To(HaveStatus(http.StatusPartialContent))
			Expect(r.Body).To(Equal(full[len(full)-100:]))
		})

		It("answers a Range outside the file with 416 range_not_satisfiable in the envelope", func() {
			r := anonymous().get(path, "Range", "bytes=999999-")
			Expect(r).To(HaveError(http.StatusRequestedRangeNotSatisfiable, "range_not_satisfiable"))
			Expect(r.Header.Get("Content-Range")).To(Equal("bytes */48044"))
		})

		It("works until the URL expires, then answers 404 not_found", func() {
			clock.Advance(service.FileURLTTL - 2*time.Second)
			Expect(anonymous().get(path)).To(HaveStatus(http.StatusOK))
			clock.Advance(3 * time.Second)
			Expect(anonymous().get(path)).To(HaveError(http.StatusNotFound, "not_found"))
			fresh := fileURL(recordingID)
			Expect(anonymous().get(fresh)).To(HaveStatus(http.StatusOK), "a new redirect signs a new URL")
		})

		DescribeTable("refuses a forged or malformed URL with 404 not_found",
			func(mangle func(string) string) {
				Expect(anonymous().get(mangle(path))).To(HaveError(http.StatusNotFound, "not_found"))
			},
			Entry("a changed expiry", func(p string) string {
				parts := strings.Split(p, ".")
				parts[1] = "9999999999"
				return strings.Join(parts, ".")
			}),
			Entry("another recording's id", func(p string) string {
				return strings.Replace(p, recordingID, store.NewID(store.PrefixRecording), 1)
			}),
			Entry("a bad signature", func(p string) string { return p[:len(p)-3] + "AAA" }),
			Entry("no signature", func(p string) string { return p[:strings.LastIndex(p, ".")] }),
			Entry("garbage", func(string) string { return service.RecordingFilePath + "hello" }),
		)

		It("deletes a recording with its file and its voicemail; the call stays", func() {
			vm := t.events(webhooks.EventVoicemailReceived)[0]
			r := t.delete("/recordings/" + recordingID)
			Expect(r).To(HaveStatus(http.StatusOK))
			Expect(r.JSON()).To(SatisfyAll(HaveKeyWithValue("id", recordingID), HaveKeyWithValue("duration", BeEquivalentTo(seconds))))
			Expect(t.get("/recordings/" + recordingID)).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.get("/recordings/" + recordingID + "/file")).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(anonymous().get(path)).To(HaveError(http.StatusNotFound, "not_found"), "a URL signed before is dead too")
			Expect(t.get("/voicemails/" + vm["id"].(string))).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(list("/accounts/" + account + "/recordings")).To(BeEmpty())
			Expect(t.get("/calls/" + vm["call"].(map[string]any)["id"].(string))).To(HaveStatus(http.StatusOK))
			Expect(t.delete("/recordings/" + recordingID)).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("foreign and missing resources", func() {
		It("cannot see or touch this project's calls, recordings and voicemails: 404 as if missing", func() {
			vm := voicemail(1)
			callID := vm["call"].(map[string]any)["id"].(string)
			recID := vm["recording_id"].(string)
			other := newTenant()
			for _, p := range []string{"/calls/" + callID, "/recordings/" + recID, "/recordings/" + recID + "/file",
				"/voicemails/" + vm["id"].(string), "/accounts/" + account + "/calls", "/accounts/" + account + "/recordings",
				"/accounts/" + account + "/voicemails"} {
				Expect(other.get(p)).To(HaveError(http.StatusNotFound, "not_found"), p)
			}
			Expect(other.delete("/recordings/" + recID)).To(HaveError(http.StatusNotFound, "not_found"))
			Expect(t.get("/recordings/"+recID)).To(HaveStatus(http.StatusOK), "still there")
		})

		DescribeTable("answers 404 not_found for ids that do not exist",
			func(path string) { Expect(t.get(path)).To(HaveError(http.StatusNotFound, "not_found")) },
			Entry("a call", "/calls/"+store.NewID(store.PrefixCall)),
			Entry("a recording", "/recordings/"+store.NewID(store.PrefixRecording)),
			Entry("a recording's file", "/recordings/"+store.NewID(store.PrefixRecording)+"/file"),
			Entry("a voicemail", "/voicemails/"+store.NewID(store.PrefixVoicemail)),
			Entry("an account's calls", "/accounts/"+store.NewID(store.PrefixAccount)+"/calls"),
		)
	})
})
