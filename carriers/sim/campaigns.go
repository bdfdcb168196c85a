package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
)

// The simulated registry reviews every submission ReviewDelay after it arrives, in a job inserted
// in the same transaction as the submission (see scheduleThreshold): it approves it unless its
// description (or the TCR id of an import) contains RejectWord, and keeps it in review when it
// contains HoldWord. A submission that repeats a reference amends it: a
// pending review judges the latest version, a decided one is reviewed again. Operators force a
// verdict with `switchboard sim campaign approve|reject`, which reports it directly.

// reviewArgs is the job that decides a review when it is Due.
type reviewArgs struct {
	Reference string    `json:"reference"`
	Due       time.Time `json:"due"`
}

// scheduleThreshold is the shortest review delay left to River's scheduler. Its scheduler makes
// scheduled jobs available only every 5 s, which would stretch a 2 s review to up to 7 s; a
// shorter review is a job that is available at once and waits out the delay in its worker.
const scheduleThreshold = 10 * time.Second

// Kind names the job.
func (reviewArgs) Kind() string { return "sim_review" }

// holdRecheck is how often a review kept by HoldWord looks at its submission again.
const holdRecheck = 10 * time.Second

// registerCampaignWorkers adds the review worker.
func (c *Carrier) registerCampaignWorkers(w *river.Workers) {
	river.AddWorker(w, &reviewWorker{c: c})
}

// SubmitCampaign queues a 10DLC campaign, or the import of one by TCR id, for review.
func (c *Carrier) SubmitCampaign(ctx context.Context, s carriers.CampaignSubmission) error {
	return c.submit(ctx, Review{Reference: s.Reference, Description: s.Description, TCRID: s.TCRID})
}

// SubmitTollFreeVerification queues a toll-free verification for review.
func (c *Carrier) SubmitTollFreeVerification(ctx context.Context, s carriers.TollFreeSubmission) error {
	return c.submit(ctx, Review{Reference: s.Reference, Description: s.Description})
}

func (c *Carrier) submit(ctx context.Context, r Review) error {
	if r.Reference == "" {
		return errors.New("sim: a submission needs a reference")
	}
	r.SubmittedAt = c.cfg.Now().UTC()
	job := reviewArgs{Reference: r.Reference, Due: r.SubmittedAt.Add(c.cfg.ReviewDelay)}
	var opts *river.InsertOpts
	if c.cfg.ReviewDelay >= scheduleThreshold {
		opts = &river.InsertOpts{ScheduledAt: job.Due}
	}
	if err := c.cfg.Store.SubmitReview(ctx, r, job, opts); err != nil {
		return fmt.Errorf("sim: record submission %s: %w", r.Reference, err)
	}
	return nil
}

// Registered reports whether the simulated registry holds a submission under reference, in review
// or decided (and not withdrawn).
func (c *Carrier) Registered(ctx context.Context, reference string) (bool, error) {
	r, err := c.cfg.Store.Review(ctx, reference)
	return r != nil, err
}

// WithdrawCampaign withdraws a submission (a 10DLC campaign or a toll-free verification): a review
// still pending is never decided, and a decided one is forgotten.
func (c *Carrier) WithdrawCampaign(ctx context.Context, reference string) error {
	if err := c.cfg.Store.WithdrawReview(ctx, reference); err != nil {
		return fmt.Errorf("sim: withdraw %s: %w", reference, err)
	}
	return nil
}

type reviewWorker struct {
	river.WorkerDefaults[reviewArgs]
	c *Carrier
}

// Work decides a review and reports the verdict; a verdict the core does not accept is reported
// again when River retries the job.
func (w *reviewWorker) Work(ctx context.Context, j *river.Job[reviewArgs]) error {
	if wait := j.Args.Due.Sub(w.c.cfg.Now()); wait >= scheduleThreshold {
		return river.JobSnooze(wait)
	} else if wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r, err := w.c.cfg.Store.Review(ctx, j.Args.Reference)
	switch {
	case err != nil:
		return fmt.Errorf("sim: read submission %s: %w", j.Args.Reference, err)
	case r == nil:
		return nil // withdrawn
	case r.DecidedAt == nil && strings.Contains(r.Description, HoldWord):
		// Kept in review; looked at again later, in case an amendment lifts the hold.
		return river.JobSnooze(holdRecheck)
	}
	// Decide first, then report: a submission amended after the decision finds it decided and
	// queues a review of its own, so no amendment goes unjudged.
	decided := w.c.cfg.Now().UTC()
	r, fresh, err := w.c.cfg.Store.DecideReview(ctx, j.Args.Reference, decided)
	switch {
	case err != nil:
		return fmt.Errorf("sim: decide submission %s: %w", j.Args.Reference, err)
	case r == nil || !fresh:
		return nil // withdrawn, or decided already
	}
	v := &carriers.Verdict{Reference: r.Reference, Approved: true}
	if strings.Contains(r.Description, RejectWord) || strings.Contains(r.TCRID, RejectWord) {
		v.Approved, v.Reason = false, "simulated review: the submission contains "+RejectWord
	}
	if err := w.c.cfg.Reporter.Report(ctx, carriers.Report{Carrier: Name, Verdict: v}); err != nil {
		// Not accepted: undo the decision (unless the submission changed since) so the retry reports it.
		undo := w.c.cfg.Store.ReopenReview(ctx, r.Reference, decided)
		return errors.Join(fmt.Errorf("sim: report verdict on %s: %w", r.Reference, err), undo)
	}
	return nil
}

var _ carriers.CampaignRegistry = (*Carrier)(nil)
