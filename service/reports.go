package service

import (
	"context"
	"errors"
	"log/slog"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/store"
)

// Reports is the core's one inbound path from the carriers: it implements carriers.Reporter and
// turns receipts, inbound messages, campaign verdicts and call events into state changes, events
// and jobs, each in one transaction. Every handler is idempotent: carriers report more than once.
type Reports struct {
	store *store.Store
	log   *slog.Logger
	// messages applies receipts and inbound messages; NewCore sets it once Messages exists.
	messages *Messages
	// voice applies call events; NewCore sets it once Voice exists.
	voice *Voice
}

// NewReports returns the inbound path over the store.
func NewReports(st *store.Store, log *slog.Logger) (*Reports, error) {
	if st == nil {
		return nil, errors.New("service: NewReports needs a store")
	}
	if log == nil {
		log = slog.Default()
	}
	return &Reports{store: st, log: log}, nil
}

// Report applies one carrier report.
func (r *Reports) Report(ctx context.Context, rep carriers.Report) error {
	switch {
	case rep.Verdict != nil:
		return r.verdict(ctx, rep.Carrier, rep.Verdict)
	case rep.Receipt != nil:
		return r.receipt(ctx, rep.Carrier, rep.Receipt)
	case rep.Inbound != nil:
		return r.inbound(ctx, rep.Carrier, rep.Inbound)
	case rep.Call != nil:
		return r.call(ctx, rep.Carrier, rep.Call)
	}
	return errors.New("service: empty carrier report")
}

var _ carriers.Reporter = (*Reports)(nil)
