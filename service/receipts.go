package service

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// Receipts: a carrier's delivery receipt walks down to the store once per batch. Concurrent
// receipts share one store operation (store.FinishOutbound), which records each message's outcome
// with its events, its webhook deliveries and the blocks it sets or lifts.

// receiptBatch is the most receipts of one store operation; receiptParallel the most such
// operations at a time: one, so that the receipts that come in during an operation wait for the
// next one together, in fewer and larger operations (with the dispatch's pause, measured at c=64
// on PostgreSQL: 129 receipts an operation instead of 22). After an operation of several receipts
// but fewer than receiptBatch, the next waits receiptLinger (kit.Batcher.Linger; the receipts of
// the operation return at once), so that under a steady stream it takes what came in over the
// pause: carriers report in bursts (the simulated carrier a burst per batch of submissions, every
// 15 ms or so at 4,000 messages a second), and each operation costs PostgreSQL about 1-1.5 ms
// beside its receipts (BenchmarkFinishOutbound: 69-80 µs a receipt in operations of 20, 34-36 in
// operations of 86, 25 in operations of 200). A lone receipt, or a full operation, does not wait:
// after a quiet spell a receipt is recorded at once, and a backlog as fast as before.
const (
	receiptBatch    = 200
	receiptParallel = 1
	receiptLinger   = 40 * time.Millisecond
	// heldConnIdle is how long a stage keeps its connection (heldConn) without work.
	heldConnIdle = 2 * time.Second
)

// heldConn is the connection of the pool on which one stage's statements run while its work comes
// (store.Pinned), given back after heldConnIdle without any: the receipts' (Messages.receiptConn)
// and the sends' flushes' (Messages.sendConn, send_batch.go). PostgreSQL keeps a prepared
// statement's plans per connection: on whichever connection the pool handed out, the receipt's
// statement (0.3-0.4 ms to plan) and its events' were planned afresh on each connection they
// came to (the first five runs of each with a custom plan), and again on each after every VACUUM
// of the webhook queue, which the events' statement writes.
type heldConn struct {
	mu      sync.Mutex
	st      *store.Store // the pinned store; nil while none is held
	release func()
	idle    *time.Timer
	busy    int
}

// take returns the pinned store of base, pinning one if none is held.
func (c *heldConn) take(base *store.Store) *store.Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	if c.st == nil {
		c.st, c.release = base.Pinned()
	}
	c.busy++
	return c.st
}

// done ends a use of the store take returned: the last use arms the idle release.
func (c *heldConn) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy--; c.busy == 0 {
		c.idle = time.AfterFunc(heldConnIdle, c.expire)
	}
}

// expire gives the connection back unless a receipt took it meanwhile.
func (c *heldConn) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy > 0 || c.st == nil {
		return
	}
	c.release()
	c.st, c.release = nil, nil
}

// receiptItem is one delivery receipt of one carrier.
type receiptItem struct {
	carrier string
	rc      *carriers.Receipt
}

// applyReceipt records a carrier's delivery receipt; concurrent receipts share one operation.
// A receipt for a message that already has its outcome (carriers repeat them) changes nothing.
func (m *Messages) applyReceipt(ctx context.Context, carrier string, rc *carriers.Receipt) error {
	_, err := m.receipts.Do(ctx, receiptItem{carrier: carrier, rc: rc})
	return err
}

// ReportReceipts applies receipts of one carrier together, as Report applies each (the simulated
// carrier reports those of a batch of submissions so): in operations of up to receiptBatch on the
// calling goroutine, beside the receipts' batcher, without a goroutine and a batcher's call
// apiece. An operation that fails is made again for each of its receipts alone, through Report's
// path, as the batcher does, so that one bad receipt does not hold back the others.
func (r *Reports) ReportReceipts(ctx context.Context, carrier string, rcs []*carriers.Receipt) error {
	if r.messages == nil {
		return ErrNotImplemented
	}
	for len(rcs) > 0 {
		n := min(len(rcs), receiptBatch)
		items := make([]receiptItem, n)
		for i, rc := range rcs[:n] {
			items[i] = receiptItem{carrier: carrier, rc: rc}
		}
		rcs = rcs[n:]
		if _, err := r.messages.applyReceipts(ctx, items); err == nil {
			continue
		}
		errs := make([]error, n)
		for i, it := range items {
			errs[i] = r.messages.applyReceipt(ctx, it.carrier, it.rc)
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

// applyReceipts records receipts: each message's outcome, message.delivered or message.failed
// (preceded by message.sent for a message whose receipt overtook the record of its submission),
// and the blocks they set or lift.
func (m *Messages) applyReceipts(ctx context.Context, items []receiptItem) ([]struct{}, error) {
	outs := make([]store.Outcome, len(items))
	for i, it := range items {
		o := store.Outcome{ID: it.rc.Reference, Status: store.StatusDelivered, At: it.rc.At.UTC().Truncate(time.Microsecond), CarrierID: it.rc.CarrierID}
		if it.rc.At.IsZero() {
			o.At = m.now()
		}
		if it.rc.Status == carriers.ReceiptFailed {
			o.Status, o.Reason = store.StatusFailed, it.rc.FailureReason
			if !knownFailure[o.Reason] {
				o.Reason = carriers.FailureUnknown
			}
		}
		outs[i] = o
	}
	rules := store.OutcomeRules{BlockReasons: blockReasons, BlockFor: BlockRetryAfter}
	st := m.receiptConn.take(m.cfg.Store)
	defer m.receiptConn.done()
	err := st.FinishOutbound(ctx, outs, rules, func(fin []*store.Finished) ([]store.Event, error) {
		// One insert, in this order: each message's message.sent gets an earlier id than its
		// outcome, so every message that reached the carrier is announced sent before it is
		// announced delivered or failed.
		var sent, outcome []store.Event
		for i, f := range fin {
			if f == nil {
				m.cfg.Logger.Debug("receipt for no message waiting for one", "carrier", items[i].carrier, "reference", outs[i].ID)
				continue
			}
			if f.WasSending {
				v := f.MessageView
				v.Message = sentStep(f.Message)
				e, err := m.viewEvent(webhooks.EventMessageSent, &v)
				if err != nil {
					return nil, err
				}
				sent = append(sent, e)
			}
			typ := webhooks.EventMessageDelivered
			if f.Status == store.StatusFailed {
				typ = webhooks.EventMessageFailed
			}
			e, err := m.viewEvent(typ, &f.MessageView)
			if err != nil {
				return nil, err
			}
			outcome = append(outcome, e)
		}
		return append(sent, outcome...), nil
	})
	return make([]struct{}, len(items)), err
}

// viewEvent is an event of type typ about a message as v shows it, in the trace of the request
// that sent it.
func (m *Messages) viewEvent(typ string, v *store.MessageView) (store.Event, error) {
	e, err := store.NewEvent(v.ProjectID, v.AccountID, typ, m.messageData(v))
	if err != nil {
		return store.Event{}, err
	}
	e.Traceparent = v.Traceparent
	return e, nil
}

// sentStep is a message as it was once sent, before the outcome that is now recorded with it.
func sentStep(msg store.Message) store.Message {
	msg.Status, msg.DeliveredAt, msg.FailedAt, msg.FailureReason = store.StatusSent, nil, nil, nil
	return msg
}
