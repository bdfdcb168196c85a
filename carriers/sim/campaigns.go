package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/store"
)

// The simulated registry reviews every submission ReviewDelay after it arrives, in a job inserted
// in the same transaction as the submission (see scheduleThreshold): it approves it unless its description (or the TCR
// id of an import) contains RejectWord. A submission that repeats a reference amends it: a
// pending review judges the latest version, a decided one is reviewed again. Operators force a
// verdict with `switchboard sim campaign approve|reject`, which reports it directly.

// review is a submission the simulated registry has received.
type review struct {
	Reference   string `gorm:"primaryKey"`
	Description string
	TCRID       string `gorm:"column:tcr_id"`
	SubmittedAt time.Time
	// DecidedAt is set once the verdict has been reported.
	DecidedAt *time.Time
}

func (review) TableName() string { return "sim_reviews" }

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

// registerCampaignWorkers adds the review worker.
func (c *Carrier) registerCampaignWorkers(w *river.Workers) {
	river.AddWorker(w, &reviewWorker{c: c})
}

// SubmitCampaign queues a 10DLC campaign, or the import of one by TCR id, for review.
func (c *Carrier) SubmitCampaign(ctx context.Context, s carriers.CampaignSubmission) error {
	return c.submit(ctx, review{Reference: s.Reference, Description: s.Description, TCRID: s.TCRID})
}

// SubmitTollFreeVerification queues a toll-free verification for review.
func (c *Carrier) SubmitTollFreeVerification(ctx context.Context, s carriers.TollFreeSubmission) error {
	return c.submit(ctx, review{Reference: s.Reference, Description: s.Description})
}

func (c *Carrier) submit(ctx context.Context, r review) error {
	if r.Reference == "" {
		return errors.New("sim: a submission needs a reference")
	}
	now := c.cfg.Now().UTC()
	r.SubmittedAt = now
	return c.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		db := tx.DB().WithContext(ctx)
		res := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&r)
		if res.Error != nil {
			return fmt.Errorf("sim: record submission %s: %w", r.Reference, res.Error)
		}
		if res.RowsAffected == 0 {
			// Amend a pending review: the conditional update re-checks decided_at under the row's
			// lock, so an amendment racing a decision either lands before it or gets a new review.
			fields := map[string]any{"description": r.Description, "tcr_id": r.TCRID, "submitted_at": now}
			pending := db.Model(&review{}).Where("reference = ? AND decided_at IS NULL", r.Reference).Updates(fields)
			if pending.Error != nil {
				return fmt.Errorf("sim: amend submission %s: %w", r.Reference, pending.Error)
			}
			if pending.RowsAffected > 0 {
				return nil // the pending review judges the amendment
			}
			fields["decided_at"] = nil
			if err := db.Model(&review{}).Where("reference = ?", r.Reference).Updates(fields).Error; err != nil {
				return fmt.Errorf("sim: resubmit %s: %w", r.Reference, err)
			}
		}
		job := reviewArgs{Reference: r.Reference, Due: now.Add(c.cfg.ReviewDelay)}
		var opts *river.InsertOpts
		if c.cfg.ReviewDelay >= scheduleThreshold {
			opts = &river.InsertOpts{ScheduledAt: job.Due}
		}
		return tx.InsertJob(ctx, job, opts)
	})
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
	// Decide first, then report: a submission amended after the decision finds it decided and
	// queues a review of its own, so no amendment goes unjudged.
	var (
		r       review
		decided time.Time
	)
	err := w.c.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		db := tx.DB().WithContext(ctx)
		q := db
		if tx.Dialect() == store.Postgres {
			q = db.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.Where("reference = ?", j.Args.Reference).Take(&r).Error; err != nil {
			return err
		}
		if r.DecidedAt != nil {
			return nil
		}
		decided = w.c.cfg.Now().UTC()
		return db.Model(&review{}).Where("reference = ?", r.Reference).Update("decided_at", decided).Error
	})
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("sim: decide submission %s: %w", j.Args.Reference, err)
	case decided.IsZero():
		return nil // decided already
	}
	v := &carriers.Verdict{Reference: r.Reference, Approved: true}
	if strings.Contains(r.Description, RejectWord) || strings.Contains(r.TCRID, RejectWord) {
		v.Approved, v.Reason = false, "simulated review: the submission contains "+RejectWord
	}
	if err := w.c.cfg.Reporter.Report(ctx, carriers.Report{Carrier: Name, Verdict: v}); err != nil {
		// Not accepted: undo the decision (unless the submission changed since) so the retry reports it.
		undo := w.c.db(ctx).Model(&review{}).Where("reference = ? AND decided_at = ?", r.Reference, decided).Update("decided_at", nil)
		return errors.Join(fmt.Errorf("sim: report verdict on %s: %w", r.Reference, err), undo.Error)
	}
	return nil
}

var _ carriers.CampaignRegistry = (*Carrier)(nil)
