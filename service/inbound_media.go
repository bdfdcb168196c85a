package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// An inbound MMS's files are copied from the carrier before anyone sees the message's event: the
// message is stored with its attachments pending (their rows keep the carrier's URLs, which the
// API never shows), and a job fetches each file through the same guarded client and limits as
// outbound attachments, with the carrier's credentials where the adapter is a
// carriers.MediaSource. A fetch that fails is retried with River's backoff (about four hours over
// MessagesConfig.InboundMediaAttempts); after the last attempt the files still missing are marked unavailable.
// The transaction that settles the message's last attachment emits message.received, so the
// event comes exactly once, with every attachment available or unavailable.

// defaultInboundMediaAttempts bounds the fetches of an inbound message's files: River waits
// attempt⁴ seconds between attempts, so ten attempts span about 4.3 hours.
const defaultInboundMediaAttempts = 10

func (m *Messages) inboundMediaOpts() *river.InsertOpts {
	return &river.InsertOpts{MaxAttempts: m.cfg.InboundMediaAttempts}
}

// inboundMediaArgs fetches the files of an inbound message from its carrier.
type inboundMediaArgs struct {
	MessageID string `json:"message_id"`
	Carrier   string `json:"carrier"`
}

// Kind names the job.
func (inboundMediaArgs) Kind() string { return "inbound_media" }

type inboundMediaWorker struct {
	river.WorkerDefaults[inboundMediaArgs]
	m *Messages
}

// Work fetches the message's files that are not settled; it fails (to be retried) while one is
// missing, except on the last attempt, which marks those unavailable.
func (w *inboundMediaWorker) Work(ctx context.Context, j *river.Job[inboundMediaArgs]) error {
	m := w.m
	atts, err := m.cfg.Store.MessageAttachments(ctx, j.Args.MessageID)
	if err != nil {
		return err
	}
	var authorize func(*http.Request)
	if c, err := m.cfg.Carriers.Get(j.Args.Carrier); err == nil {
		if src, ok := c.(carriers.MediaSource); ok {
			authorize = src.AuthorizeMedia
		}
	}
	last := j.Attempt >= j.MaxAttempts
	var missing []error
	for i := range atts {
		a := &atts[i]
		if a.FetchedAt != nil || a.UnavailableAt != nil {
			continue
		}
		fate := store.AttachmentFate{At: m.now()}
		ct, data, err := m.fetchAttachment(ctx, a.URL, authorize)
		switch {
		case err == nil:
			fate.Type, fate.ContentType, fate.Data = AttachmentType(ct), ct, data
		case !last:
			missing = append(missing, fmt.Errorf("attachment %s: %w", a.ID, err))
			continue
		default:
			m.cfg.Logger.Warn("inbound attachment unavailable: every fetch from the carrier failed",
				"message_id", j.Args.MessageID, "attachment_id", a.ID, "carrier", j.Args.Carrier, "err", err)
		}
		if err := m.settleAttachment(ctx, j.Args.MessageID, a.ID, fate); err != nil {
			return err
		}
	}
	return errors.Join(missing...)
}

// settleAttachment records an inbound attachment's fate and, when it was the message's last one
// to settle, emits message.received in the same transaction.
func (m *Messages) settleAttachment(ctx context.Context, messageID, id string, fate store.AttachmentFate) error {
	return m.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		msg, err := tx.LockMessage(ctx, messageID)
		if err != nil {
			return err
		}
		settled, left, err := tx.SettleAttachment(ctx, messageID, id, fate)
		if err != nil || !settled || left > 0 {
			return err
		}
		return m.messageEvent(ctx, tx, webhooks.EventMessageReceived, msg, nil)
	})
}
