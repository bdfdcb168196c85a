package service

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// Unit specs of how a claimed batch is split for submission; the API specs in server/ send
// through it end to end.
var _ = Describe("Dispatch order", func() {
	work := func(id, conversation string) *store.OutboundWork {
		return &store.OutboundWork{Message: store.Message{ID: id, ConversationID: conversation}}
	}
	ids := func(works []*store.OutboundWork, runs [][]int) [][]string {
		var out [][]string
		for _, run := range runs {
			var r []string
			for _, i := range run {
				r = append(r, works[i].ID)
			}
			out = append(out, r)
		}
		return out
	}

	It("submits one conversation's messages one after the other, in the order they were made, and conversations side by side", func() {
		// Claimed out of order, as a settled message is appended after the claimed ones.
		works := []*store.OutboundWork{
			work("msg_03", "cnv_a"), work("msg_02", "cnv_b"), work("msg_05", "cnv_a"),
			work("msg_01", "cnv_a"), work("msg_04", "cnv_c"), work("msg_06", "cnv_b"),
		}
		Expect(ids(works, byConversation(works))).To(Equal([][]string{
			{"msg_01", "msg_03", "msg_05"}, {"msg_02", "msg_06"}, {"msg_04"},
		}))
	})

	It("keeps every message exactly once, and gives a message without a conversation a run of its own", func() {
		works := []*store.OutboundWork{work("msg_2", ""), work("msg_1", ""), work("msg_3", "cnv_a")}
		Expect(ids(works, byConversation(works))).To(Equal([][]string{{"msg_1"}, {"msg_2"}, {"msg_3"}}))
		Expect(byConversation(nil)).To(BeEmpty())
	})

	It("submits a carrier's batches in waves: the first message of each conversation, then the second of each", func() {
		works := []*store.OutboundWork{
			work("msg_03", "cnv_a"), work("msg_02", "cnv_b"), work("msg_05", "cnv_a"),
			work("msg_01", "cnv_a"), work("msg_04", "cnv_c"), work("msg_06", "cnv_b"),
		}
		var waves [][]int
		for _, run := range byConversation(works) {
			waves = addWave(waves, run)
		}
		Expect(ids(works, waves)).To(Equal([][]string{{"msg_01", "msg_02", "msg_04"}, {"msg_03", "msg_06"}, {"msg_05"}}))
	})
})
