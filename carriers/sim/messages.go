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

// receiptArgs is a message's fate; alone, the job that reports it after the simulated latency.
type receiptArgs struct {
	Reference string `json:"reference"`
	CarrierID string `json:"carrier_id"`
	Outcome   string `json:"outcome"`
}

// Kind names the job.
func (receiptArgs) Kind() string { return "sim_receipt" }

type receiptWorker struct {
	river.WorkerDefaults[receiptArgs]
	c *Carrier
}

func (w *receiptWorker) Work(ctx context.Context, j *river.Job[receiptArgs]) error {
	return w.c.report(ctx, j.Args)
}

// receiptsArgs is the job that reports the fates of the messages of one batch of submissions
// after the simulated latency: one job per batch rather than per message.
type receiptsArgs struct {
	Receipts []receiptArgs `json:"receipts"`
}

// Kind names the job.
func (receiptsArgs) Kind() string { return "sim_receipts" }

type receiptsWorker struct {
	river.WorkerDefaults[receiptsArgs]
	c *Carrier
}

// Work reports the receipts at once, so that the core records them together. An error runs
// them all again: the core ignores a receipt it has recorded already, as with real carriers.
func (w *receiptsWorker) Work(ctx context.Context, j *river.Job[receiptsArgs]) error {
	errs := make([]error, len(j.Args.Receipts))
	var wg sync.WaitGroup
	for i, a := range j.Args.Receipts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.c.report(ctx, a)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// report reports one message's fate.
func (c *Carrier) report(ctx context.Context, a receiptArgs) error {
	rc := &carriers.Receipt{Reference: a.Reference, CarrierID: a.CarrierID, Status: carriers.ReceiptDelivered, At: c.cfg.Now()}
	if a.Outcome != outcomeDelivered {
		rc.Status, rc.FailureReason = carriers.ReceiptFailed, a.Outcome
	}
	return c.cfg.Reporter.Report(ctx, carriers.Report{Carrier: Name, Receipt: rc})
}

// registerMessageWorkers adds the receipt workers (receiptWorker for the jobs of one receipt that
// earlier releases enqueued).
func (c *Carrier) registerMessageWorkers(w *river.Workers) {
	river.AddWorker(w, &receiptsWorker{c: c})
	river.AddWorker(w, &receiptWorker{c: c})
}

// Submit accepts a message into the outbox and schedules its receipt, in one transaction. The
// reference is unique in the outbox: a repeated submission stores nothing and answers with the
// first one's carrier id and Duplicate set.
func (c *Carrier) Submit(ctx context.Context, m carriers.Outbound) (carriers.Submission, error) {
	switch m.To {
	case RefuseNumber:
		return carriers.Submission{}, &carriers.SubmitError{Permanent: true, Reason: carriers.FailureInvalidMobileNumber}
	case FlakyNumber:
		c.mu.Lock()
		c.flaky[m.Reference]++
		n := c.flaky[m.Reference]
		c.mu.Unlock()
		if n <= FlakyAttempts {
			return carriers.Submission{}, &carriers.SubmitError{Reason: carriers.FailureUnknown, Err: fmt.Errorf("simulated temporary failure %d", n)}
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
	e := &OutboxEntry{Reference: m.Reference, CarrierID: kit.NewID("sim"), From: m.From, To: m.To, Body: m.Body,
		Parts: m.Segments, Encoding: m.Encoding, Media: media, Outcome: outcome, CreatedAt: c.cfg.Now().UTC()}
	sub, err := c.submits.Do(ctx, e)
	if err != nil {
		return carriers.Submission{}, fmt.Errorf("sim: submit %s: %w", m.Reference, err)
	}
	return sub, nil
}

// receiptGrace is how much later than the simulated latency the receipts' job comes due: it
// reports them only when the process that accepted the messages ended before it could.
const receiptGrace = 10 * time.Second

// store puts concurrent submissions in the outbox in one transaction, with the job that reports
// their receipts should this process end first; this process reports them itself after the
// simulated latency, then forgets the job. A reference already in the outbox (or twice in the
// batch) stores nothing and answers with the first submission's carrier id and Duplicate set.
func (c *Carrier) store(ctx context.Context, es []*OutboxEntry) ([]carriers.Submission, error) {
	out := make([]carriers.Submission, len(es))
	var receipts []receiptArgs
	jobID, err := c.cfg.Store.AddToOutbox(ctx, es, func(first map[string]string) (river.JobArgs, *river.InsertOpts) {
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
			receipts = append(receipts, receiptArgs{Reference: e.Reference, CarrierID: cid, Outcome: e.Outcome})
		}
		if len(receipts) == 0 {
			return nil, nil
		}
		return receiptsArgs{Receipts: receipts}, &river.InsertOpts{ScheduledAt: time.Now().Add(max(0, c.cfg.Latency) + receiptGrace)}
	})
	if err == nil && jobID != 0 {
		c.reportLater(receipts, jobID)
	}
	return out, err
}

// reportLater reports receipts after the simulated latency, then forgets their job.
func (c *Carrier) reportLater(rs []receiptArgs, jobID int64) {
	time.AfterFunc(max(0, c.cfg.Latency), func() {
		ctx, cancel := context.WithTimeout(context.Background(), receiptGrace)
		defer cancel()
		errs := make([]error, len(rs))
		var wg sync.WaitGroup
		for i, a := range rs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = c.report(ctx, a)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			c.cfg.Logger.Debug("sim: receipts not reported; their job reports them", "err", err)
			return
		}
		if err := c.cfg.Store.ForgetJob(ctx, jobID); err != nil {
			c.cfg.Logger.Debug("sim: forget a receipts job", "err", err)
		}
	})
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
