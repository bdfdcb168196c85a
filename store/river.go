package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// This file is the only one that writes River's tables (river_job) with SQL of our own; every
// other job goes through River's client (InsertJobs, StartWorkers in jobs.go), and opsstats.go only
// reads them. River owns the schema: river_test.go compares each row written here with the one
// River's own insert writes for the same job, on SQLite and PostgreSQL, so that a River upgrade
// that changes what its insert writes fails a spec before it reaches a database.

// plainJob is a row of river_job as River's insert writes it for a job without unique options,
// tags or metadata.
type plainJob struct {
	args        []byte
	kind, queue string
	maxAttempts int
	priority    int
	scheduledAt time.Time
	state       rivertype.JobState
}

// plainJobs resolves jobs' options as River does (the insert's options, then the args' own,
// then River's defaults), or reports false when one needs River's own insert: unique options,
// tags or metadata. A job scheduled at or before now is available at once.
func plainJobs(params []river.InsertManyParams, now time.Time) ([]plainJob, bool) {
	out := make([]plainJob, len(params))
	for i, p := range params {
		opts := river.InsertOpts{}
		if p.InsertOpts != nil {
			opts = *p.InsertOpts
		}
		var own river.InsertOpts
		if a, ok := p.Args.(river.JobArgsWithInsertOpts); ok {
			own = a.InsertOpts()
		}
		if opts.Tags != nil || own.Tags != nil || len(opts.Metadata) > 0 || unique(opts.UniqueOpts) || unique(own.UniqueOpts) {
			return nil, false
		}
		b, err := json.Marshal(p.Args)
		if err != nil {
			return nil, false // River's insert reports it
		}
		j := plainJob{args: b, kind: p.Args.Kind(), queue: cmp.Or(opts.Queue, own.Queue, river.QueueDefault),
			maxAttempts: cmp.Or(opts.MaxAttempts, own.MaxAttempts, river.MaxAttemptsDefault),
			priority:    cmp.Or(opts.Priority, own.Priority, river.PriorityDefault),
			scheduledAt: cmp.Or(opts.ScheduledAt, own.ScheduledAt, now), state: rivertype.JobStateAvailable}
		if j.priority < 1 || j.priority > 4 || j.kind == "" {
			return nil, false
		}
		if j.scheduledAt.After(now) {
			j.state = rivertype.JobStateScheduled
		}
		out[i] = j
	}
	return out, true
}

func unique(o river.UniqueOpts) bool {
	return o.ByArgs || o.ByPeriod != 0 || o.ByQueue || o.ByState != nil || o.ExcludeKind
}

// insertPlainJobs writes jobs into River's table with one plain multi-row INSERT, the statement
// River's other-language clients use too: River's own insert through database/sql encodes each
// of its thirteen array parameters as text, which costs more than the rest of a send.
func (s *Store) insertPlainJobs(ctx context.Context, jobs []plainJob) error {
	const perStatement = 5000 // 7 parameters each, under PostgreSQL's 65,535
	for len(jobs) > 0 {
		n := min(len(jobs), perStatement)
		var sb strings.Builder
		args := appendPlainJobs(&sb, make([]any, 0, 7*n), jobs[:n])
		if err := s.q(ctx).Exec(sb.String(), args...).Error; err != nil {
			return fmt.Errorf("store: insert %d jobs: %w", n, err)
		}
		jobs = jobs[n:]
	}
	return nil
}

// plainJobCasts are the casts of appendPlainJobs' parameters, in its column order.
var plainJobCasts = [7]string{"::jsonb", "", "", "", "", "", "::river_job_state"}

// appendPlainJobs writes the INSERT of jobs into sb, with gorm's ? placeholders, and returns args
// with its parameters.
func appendPlainJobs(sb *strings.Builder, args []any, jobs []plainJob) []any {
	sb.WriteString("INSERT INTO river_job (args, kind, max_attempts, priority, queue, scheduled_at, state) VALUES ")
	for i, j := range jobs {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(")
		for k, v := range [7]any{string(j.args), j.kind, j.maxAttempts, j.priority, j.queue, j.scheduledAt.UTC(), string(j.state)} {
			if k > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("?")
			sb.WriteString(plainJobCasts[k])
			args = append(args, v)
		}
		sb.WriteString(")")
	}
	return args
}
