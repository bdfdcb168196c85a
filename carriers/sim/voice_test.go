package sim_test

import (
	"encoding/binary"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
)

var _ = Describe("Simulated calls", func() {
	// callReports returns the call events reported about a call, oldest first.
	callReports := func(id string) []carriers.CallEvent {
		var out []carriers.CallEvent
		for _, r := range reports.Reports() {
			if r.Call != nil && r.Call.CarrierID == id {
				ExpectWithOffset(1, r.Carrier).To(Equal(sim.Name))
				out = append(out, *r.Call)
			}
		}
		return out
	}

	It("reports an answered call ringing, in progress and completed, in time order", func(ctx SpecContext) {
		id, err := carrier.PlaceCall(ctx, sim.Call{From: "+14155550123", To: "+18335550100", Answered: true, TalkSeconds: 12})
		Expect(err).NotTo(HaveOccurred())
		evs := callReports(id)
		Expect(evs).To(HaveExactElements(
			HaveField("Status", carriers.CallRinging), HaveField("Status", carriers.CallInProgress),
			SatisfyAll(HaveField("Status", carriers.CallCompleted), HaveField("Duration", sim.RingSeconds+12), HaveField("RecordingURL", "")),
		))
		Expect(evs).To(HaveEach(SatisfyAll(HaveField("From", "+14155550123"), HaveField("To", "+18335550100"))))
		Expect(evs[2].At.Sub(evs[0].At)).To(BeNumerically("==", (sim.RingSeconds+12)*1e9))
		Expect(evs[1].At.After(evs[0].At)).To(BeTrue())
	})

	It("reports an unanswered call as missed with a voicemail it can fetch as a WAV file", func(ctx SpecContext) {
		id, err := carrier.PlaceCall(ctx, sim.Call{From: "+14155550123", To: "+18335550100", VoicemailSeconds: 2})
		Expect(err).NotTo(HaveOccurred())
		evs := callReports(id)
		Expect(evs).To(HaveExactElements(HaveField("Status", carriers.CallRinging), SatisfyAll(
			HaveField("Status", carriers.CallMissed), HaveField("Voicemail", true), HaveField("RecordingSeconds", 2),
			HaveField("Duration", sim.RingSeconds+2), HaveField("RecordingURL", Not(BeEmpty())))))
		a, err := carrier.FetchRecording(ctx, evs[1].RecordingURL)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.ContentType).To(Equal("audio/wav"))
		Expect(a.Data).To(HaveLen(44 + 2*8000*2))
		Expect(string(a.Data[0:4]) + string(a.Data[8:12]) + string(a.Data[36:40])).To(Equal("RIFFWAVEdata"))
		Expect(binary.LittleEndian.Uint32(a.Data[40:44])).To(BeEquivalentTo(2 * 8000 * 2))
		again, err := carrier.FetchRecording(ctx, evs[1].RecordingURL)
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(Equal(a), "every fetch (on any instance) gives the same file")
	})

	It("reports an unanswered call without a voicemail as no_answer", func(ctx SpecContext) {
		id, err := carrier.PlaceCall(ctx, sim.Call{From: "+14155550123", To: "+18335550100"})
		Expect(err).NotTo(HaveOccurred())
		Expect(callReports(id)).To(HaveExactElements(HaveField("Status", carriers.CallRinging),
			SatisfyAll(HaveField("Status", carriers.CallNoAnswer), HaveField("RecordingURL", ""))))
	})

	It("refuses voicemails longer than the cap and recordings it never made", func(ctx SpecContext) {
		_, err := carrier.PlaceCall(ctx, sim.Call{From: "+14155550123", To: "+18335550100", VoicemailSeconds: sim.MaxVoicemailSeconds + 1})
		Expect(err).To(HaveOccurred())
		for _, url := range []string{"https://example.com/a.wav", "sim-recording:x:y", sim.RecordingURL(sim.MaxVoicemailSeconds+1, "c")} {
			_, err := carrier.FetchRecording(ctx, url)
			Expect(err).To(HaveOccurred(), url)
		}
	})

	It("makes a WAV file of exactly the length asked for", func() {
		Expect(sim.ToneWAV(0)).To(HaveLen(44))
		Expect(sim.ToneWAV(5)).To(HaveLen(44 + 5*sim.WAVSampleRate*2))
	})
})
