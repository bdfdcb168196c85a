package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/kit"
)

// MagicNumbers are destination numbers whose messages fail with the failure reason beside them,
// reported by a failed receipt after the configured latency; every other number is delivered.
// (Twilio's test numbers follow the same idea.) The README lists them.
var MagicNumbers = map[string]string{
	"+15005550001": carriers.FailureInvalidMobileNumber,
	"+15005550002": carriers.FailureUnreachableCarrier,
	"+15005550003": carriers.FailureLandline,
	"+15005550004": carriers.FailureCarrierFiltered,
	"+15005550005": carriers.FailureOptedOutAtCarrier,
	"+15005550006": carriers.FailureUnknown,
}

// Other magic destination numbers.
const (
	// RefuseNumber is refused at submission, permanently, as an invalid mobile number.
	RefuseNumber = "+15005550009"
	// FlakyNumber makes every submission fail with a temporary error until it has been tried
	// FlakyAttempts times; the next is accepted (exercises the retry of dispatch).
	FlakyNumber = "+15005550007"
	// SilentNumber is accepted and never gets a receipt: the message stays sent.
	SilentNumber = "+15005550008"
)

// FlakyAttempts is how many submissions to FlakyNumber fail before one is accepted.
const FlakyAttempts = 1

// Outcomes stored with an outbox entry.
const (
	outcomeDelivered = "delivered"
	outcomeSilent    = "silent"
)

// OutboxEntry is a message the simulated carrier accepted: what the handset received.
type OutboxEntry struct {
	// Reference is the client reference it was submitted with (a message id); unique.
	Reference string `json:"reference"`
	CarrierID string `json:"carrier_id"`
	From      string `json:"from"`
	To        string `json:"to"`
	Body      string `json:"body"`
	// Parts is the number of SMS segments.
	Parts    int    `json:"parts"`
	Encoding string `json:"encoding"`
	// Media are the attachments' URLs.
	Media []string `json:"media"`
	// Outcome is the fate the receipt will report: delivered, silent (none) or a failure reason.
	Outcome   string    `json:"outcome"`
	CreatedAt time.Time `json:"created_at"`
}

// The receipts: the process that accepted a batch of submissions reports their receipts itself
// after the simulated latency, from a timer. So that a receipt survives the end of that process,
// the batch's receipts are kept in the database (sim_receipts), in the transaction that puts the
// messages into the outbox, due ReceiptGrace after the latency; once reported, they are forgotten
// (deleted), with the other batches reported within forgetDelay, in one statement. The sweep that
// every serving instance runs (Start) reports the kept receipts that came due: only those of a
// process that ended before it reported them, or whose report failed, are still kept by then. A
// receipt is thus reported at least once, and twice only when a process ends between its report
// and its forgetting, or when its report outlasts the grace; the core ignores a receipt it has
// recorded already, as with real carriers.

// receiptGrace is how much later than the simulated latency the sweep reports kept receipts, by
// default (Config.ReceiptGrace).
const receiptGrace = 10 * time.Second

// forgetDelay is how long reported receipts wait to be forgotten, so that one statement forgets
// the batches reported meanwhile.
const forgetDelay = 250 * time.Millisecond

// Sweep: how often it looks for kept receipts that came due, and the most batches of one claim.
const (
	sweepEvery = time.Second
	sweepLimit = 100
)

// report reports one message's fate.
func (c *Carrier) report(ctx context.Context, a OwedReceipt) error {
	return c.cfg.Reporter.Report(ctx, carriers.Report{Carrier: Name, Receipt: c.receipt(a)})
}

// receipt is the receipt of a message's fate, as of now.
func (c *Carrier) receipt(a OwedReceipt) *carriers.Receipt {
	rc := &carriers.Receipt{Reference: a.Reference, CarrierID: a.CarrierID, Status: carriers.ReceiptDelivered, At: c.cfg.Now()}
	if a.Outcome != outcomeDelivered {
		rc.Status, rc.FailureReason = carriers.ReceiptFailed, a.Outcome
	}
	return rc
}

// batchReporter is a Reporter that takes many receipts of one carrier in one call (the core's
// service.Reports), each as Report would, so that they are recorded together without a call of
// Report apiece.
type batchReporter interface {
	ReportReceipts(ctx context.Context, carrier string, rcs []*carriers.Receipt) error
}

// reportAll reports receipts at once, so that the core records them together: in one call when
// the Reporter takes batches, else concurrently.
func (c *Carrier) reportAll(ctx context.Context, rs []OwedReceipt) error {
	if b, ok := c.cfg.Reporter.(batchReporter); ok && len(rs) > 1 {
		rcs := make([]*carriers.Receipt, len(rs))
		for i, a := range rs {
			rcs[i] = c.receipt(a)
		}
		return b.ReportReceipts(ctx, Name, rcs)
	}
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	for i, a := range rs {
		wg.Go(func() { errs[i] = c.report(ctx, a) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// receiptArgs is the job of one receipt that earlier releases enqueued.
type receiptArgs OwedReceipt

// Kind names the job.
func (receiptArgs) Kind() string { return "sim_receipt" }

type receiptWorker struct {
	river.WorkerDefaults[receiptArgs]
	c *Carrier
}

func (w *receiptWorker) Work(ctx context.Context, j *river.Job[receiptArgs]) error {
	return w.c.report(ctx, OwedReceipt(j.Args))
}

// receiptsArgs is the job of the receipts of one batch of submissions that earlier releases
// enqueued (they are kept in sim_receipts now).
type receiptsArgs struct {
	Receipts []OwedReceipt `json:"receipts"`
}

// Kind names the job.
func (receiptsArgs) Kind() string { return "sim_receipts" }

type receiptsWorker struct {
	river.WorkerDefaults[receiptsArgs]
	c *Carrier
}

// Work reports the receipts. An error runs them all again: the core ignores a receipt it has
// recorded already.
func (w *receiptsWorker) Work(ctx context.Context, j *river.Job[receiptsArgs]) error {
	return w.c.reportAll(ctx, j.Args.Receipts)
}

// registerMessageWorkers adds the workers of the receipt jobs that earlier releases enqueued, so
// that those left in a database are reported.
func (c *Carrier) registerMessageWorkers(w *river.Workers) {
	river.AddWorker(w, &receiptsWorker{c: c})
	river.AddWorker(w, &receiptWorker{c: c})
}

// Submit accepts a message into the outbox and schedules its receipt, in one transaction. The
// reference is unique in the outbox: a repeated submission stores nothing and answers with the
// first one's carrier id and Duplicate set.
func (c *Carrier) Submit(ctx context.Context, m carriers.Outbound) (carriers.Submission, error) {
	e, err := c.entry(m)
	if err != nil {
		return carriers.Submission{}, err
	}
	sub, err := c.submits.Do(ctx, e)
	if err != nil {
		return carriers.Submission{}, submitFailed(e, err)
	}
	return sub, nil
}

// SubmitBatch submits messages together, each with Submit's answer (a submission or an error,
// at the same index): those the carrier takes are stored in the outbox, with their receipts, in
// one transaction per batcher's worth (200), where concurrent Submit calls that a dispatcher
// starts one after the other are stored in as many flushes as reach the batcher apart (about four
// for a claim of 30). Submissions of one reference in one call are stored once (the later ones
// answer Duplicate); a failed transaction of several is made again for each message alone, as
// the batcher does, so that one bad message does not hold back the others.
func (c *Carrier) SubmitBatch(ctx context.Context, ms []carriers.Outbound) ([]carriers.Submission, []error) {
	subs, errs := make([]carriers.Submission, len(ms)), make([]error, len(ms))
	var (
		es  []*OutboxEntry
		idx []int
	)
	for i, m := range ms {
		e, err := c.entry(m)
		if err != nil {
			errs[i] = err
			continue
		}
		es, idx = append(es, e), append(idx, i)
	}
	for len(es) > 0 {
		n := min(len(es), submitBatch)
		batch, at := es[:n], idx[:n]
		es, idx = es[n:], idx[n:]
		if err := ctx.Err(); err != nil {
			for k, e := range batch {
				errs[at[k]] = submitFailed(e, err)
			}
			continue
		}
		// As the batcher's flush: the transaction does not end with the caller's context, as the
		// carrier may have the messages once it commits.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), submitTimeout)
		out, err := c.store(fctx, batch)
		cancel()
		if err == nil {
			for k := range batch {
				subs[at[k]] = out[k]
			}
			continue
		}
		for k, e := range batch {
			if len(batch) == 1 {
				errs[at[k]] = submitFailed(e, err)
				continue
			}
			sub, err := c.submits.Do(ctx, e)
			if err != nil {
				errs[at[k]] = submitFailed(e, err)
				continue
			}
			subs[at[k]] = sub
		}
	}
	return subs, errs
}

// submitBatch is the most submissions of one transaction; submitTimeout bounds one.
const (
	submitBatch   = 200
	submitTimeout = 30 * time.Second
)

// submitFailed is the error of e's submission that the store failed with err.
func submitFailed(e *OutboxEntry, err error) error {
	return fmt.Errorf("sim: submit %s: %w", e.Reference, err)
}

// entry is what m becomes in the outbox, or the error the carrier answers m with at once (a
// refused number, a flaky number's failures).
func (c *Carrier) entry(m carriers.Outbound) (*OutboxEntry, error) {
	switch m.To {
	case RefuseNumber:
		return nil, &carriers.SubmitError{Permanent: true, Reason: carriers.FailureInvalidMobileNumber}
	case FlakyNumber:
		c.mu.Lock()
		c.flaky[m.Reference]++
		n := c.flaky[m.Reference]
		c.mu.Unlock()
		if n <= FlakyAttempts {
			return nil, &carriers.SubmitError{Reason: carriers.FailureUnknown, Err: fmt.Errorf("simulated temporary failure %d", n)}
		}
	}
	outcome := outcomeDelivered
	if reason, ok := MagicNumbers[m.To]; ok {
		outcome = reason
	} else if m.To == SilentNumber {
		outcome = outcomeSilent
	}
	media := make([]string, 0, len(m.Media))
	for _, md := range m.Media {
		media = append(media, md.URL)
	}
	return &OutboxEntry{Reference: m.Reference, CarrierID: kit.NewID("sim"), From: m.From, To: m.To, Body: m.Body,
		Parts: m.Segments, Encoding: m.Encoding, Media: media, Outcome: outcome, CreatedAt: c.cfg.Now().UTC()}, nil
}

// store puts concurrent submissions in the outbox in one transaction, which keeps their receipts
// should this process end before it reports them; this process reports them itself after the
// simulated latency, then forgets them. A reference already in the outbox (or twice in the
// batch) stores nothing and answers with the first submission's carrier id and Duplicate set.
func (c *Carrier) store(ctx context.Context, es []*OutboxEntry) ([]carriers.Submission, error) {
	out := make([]carriers.Submission, len(es))
	var receipts []OwedReceipt
	id, err := c.cfg.Store.AddToOutbox(ctx, es, func(first map[string]string) ([]OwedReceipt, time.Time) {
		receipts = receipts[:0]
		fresh := map[string]bool{}
		for i, e := range es {
			cid := first[e.Reference]
			out[i] = carriers.Submission{CarrierID: cid, Duplicate: cid != e.CarrierID || fresh[e.Reference]}
			if out[i].Duplicate {
				continue
			}
			if fresh[e.Reference] = true; e.Outcome == outcomeSilent {
				continue
			}
			receipts = append(receipts, OwedReceipt{Reference: e.Reference, CarrierID: cid, Outcome: e.Outcome})
		}
		return receipts, time.Now().Add(max(0, c.cfg.Latency) + c.cfg.ReceiptGrace)
	})
	if err == nil && id != 0 {
		c.reportLater(receipts, id)
	}
	return out, err
}

// reportLater reports receipts after the simulated latency, then forgets them (kept under id).
// Receipts whose report failed stay kept: the sweep reports them again.
func (c *Carrier) reportLater(rs []OwedReceipt, id int64) {
	time.AfterFunc(max(0, c.cfg.Latency), func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ReceiptGrace)
		defer cancel()
		if err := c.reportAll(ctx, rs); err != nil {
			c.cfg.Logger.Debug("sim: receipts not reported; the sweep reports them", "err", err)
			return
		}
		c.forget(id)
	})
}

// forget queues kept receipts to be forgotten with the others reported within forgetDelay.
func (c *Carrier) forget(id int64) {
	c.mu.Lock()
	c.reported = append(c.reported, id)
	first := len(c.reported) == 1
	c.mu.Unlock()
	if first {
		time.AfterFunc(forgetDelay, c.forgetReported)
	}
}

// forgetReported forgets the receipts reported since the last time. Those it fails to forget are
// reported again by the sweep.
func (c *Carrier) forgetReported() {
	c.mu.Lock()
	ids := c.reported
	c.reported = nil
	c.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ReceiptGrace)
	defer cancel()
	if err := c.cfg.Store.ForgetReceipts(ctx, ids); err != nil {
		c.cfg.Logger.Debug("sim: forget reported receipts", "err", err)
	}
}

// Start starts the sweep, which reports the kept receipts that came due (those of a process
// that ended before it reported them, or whose report failed), until Close. An instance that
// serves starts it; operator commands do not. Calling it again does nothing.
func (c *Carrier) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sweeper != nil {
		return
	}
	r, ctx, draining := kit.NewRunner(context.Background(), true)
	c.sweeper = r
	r.Go(func() { c.sweep(ctx, draining) })
}

// Close stops the sweep (the claim or report in flight ends first) and forgets the receipts
// reported so far.
func (c *Carrier) Close() error {
	c.mu.Lock()
	r := c.sweeper
	c.mu.Unlock()
	var err error
	if r != nil {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ReceiptGrace)
		defer cancel()
		err = r.Stop(ctx)
	}
	c.forgetReported()
	return err
}

// sweep reports kept receipts that came due, every sweepEvery (at once again after a full claim).
func (c *Carrier) sweep(ctx context.Context, draining <-chan struct{}) {
	backoff := sweepEvery
	for !kit.Stopping(ctx, draining) {
		now := time.Now()
		claimed, err := c.cfg.Store.ClaimReceipts(ctx, now, now.Add(c.cfg.ReceiptGrace), sweepLimit)
		if err != nil {
			backoff = kit.ClaimFailed(ctx, draining, c.cfg.Logger, "sim: claim due receipts", err, backoff)
			continue
		}
		backoff = sweepEvery
		reported := make([]bool, len(claimed))
		var wg sync.WaitGroup
		for i, b := range claimed {
			wg.Go(func() {
				if err := c.reportAll(ctx, b.Receipts); err != nil {
					c.cfg.Logger.Warn("sim: report due receipts; they are reported again later", "err", err)
					return
				}
				reported[i] = true
			})
		}
		wg.Wait()
		var done []int64
		for i, b := range claimed {
			if reported[i] {
				done = append(done, b.ID)
			}
		}
		if len(done) > 0 {
			if err := c.cfg.Store.ForgetReceipts(ctx, done); err != nil {
				c.cfg.Logger.Warn("sim: forget reported receipts", "err", err)
			}
		}
		if len(claimed) < sweepLimit {
			kit.Sleep(ctx, draining, nil, nil, sweepEvery)
		}
	}
}

// Inbound injects a message from a handset (From) to one of our numbers (To), as a carrier
// reports it; it returns the carrier id it gave the message.
func (c *Carrier) Inbound(ctx context.Context, from, to, body string, media []carriers.Media) (string, error) {
	id := kit.NewID("simin")
	err := c.cfg.Reporter.Report(ctx, carriers.Report{Carrier: Name, Inbound: &carriers.InboundMessage{
		CarrierID: id, From: from, To: to, Body: body, Media: media, At: c.cfg.Now()}})
	return id, err
}

// Outbox lists what handsets received through the simulated carrier, oldest first, only to one
// number when to is not empty.
func Outbox(ctx context.Context, st Store, to string) ([]OutboxEntry, error) {
	out, err := st.Outbox(ctx, strings.TrimSpace(to))
	if err != nil {
		return nil, fmt.Errorf("sim: outbox: %w", err)
	}
	return out, nil
}

var _ carriers.Messenger = (*Carrier)(nil)
