package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// SetTidyQueueEvery changes how many rows leave a queue (outbound_queue, webhook_queue) between
// two VACUUMs of it, with no least time between them, for a spec; it returns the function that
// restores the settings.
func SetTidyQueueEvery(n int64) (restore func()) {
	return SetTidyQueue(n, 0)
}

// SetTidyQueue changes how many rows leave a queue between two VACUUMs of it, and the least time
// between two VACUUMs of the outbound queue, for a spec; it returns the function that restores the settings.
func SetTidyQueue(n int64, interval time.Duration) (restore func()) {
	wasN, wasInterval := tidyQueueEvery, tidyQueueInterval
	tidyQueueEvery, tidyQueueInterval = n, interval
	return func() { tidyQueueEvery, tidyQueueInterval = wasN, wasInterval }
}

// OutboundVacuums counts the VACUUMs of the outbound queue this store has run.
func (s *Store) OutboundVacuums() int64 { return s.tidy.outbound.done.Load() }

// WebhookVacuums counts the VACUUMs of the webhook queue this store has run.
func (s *Store) WebhookVacuums() int64 { return s.tidy.webhooks.done.Load() }

// FastArrayMap is a pgx type map with the store's own encoding of the hot paths' arrays.
func FastArrayMap() *pgtype.Map {
	m := pgtype.NewMap()
	useFastArrays(m)
	return m
}

// IsFastArrayPlan reports whether m encodes value as oid through the store's own array encoding.
func IsFastArrayPlan(m *pgtype.Map, oid uint32, value any) bool {
	_, ok := m.PlanEncode(oid, pgtype.BinaryFormatCode, value).(fastArrayPlan)
	return ok
}

// IsOptionalScanPlan reports whether m scans oid into target through the store's own plan for
// optional values.
func IsOptionalScanPlan(m *pgtype.Map, oid uint32, format int16, target any) bool {
	switch m.PlanScan(oid, format, target).(type) {
	case *optionalScanPlan[string], *optionalScanPlan[time.Time]:
		return true
	}
	return false
}

// LoadSendContextsPG and LoadSendContextsEachPG are the send read's statements on PostgreSQL, for
// a spec of their plans.
var (
	LoadSendContextsPG     = loadSendContextsPG
	LoadSendContextsEachPG = loadSendContextsEachPG
)

// BackendPID is the process id of the PostgreSQL backend that the store's next pgx statement runs
// on (a pinned store's own connection).
func (s *Store) BackendPID(ctx context.Context) (uint32, error) {
	var pid uint32
	err := s.pgxConn(ctx, func(c *pgx.Conn) error { pid = c.PgConn().PID(); return nil })
	return pid, err
}

// FailPinned fails a statement on a pinned store's connection, as a broken connection would.
func (s *Store) FailPinned(ctx context.Context) error {
	return s.pgxConn(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, "SELECT 1/0")
		return err
	})
}

// ClaimDeliveriesPG is the webhook claim's statement on PostgreSQL, for a spec of its plan.
const ClaimDeliveriesPG = "WITH " + claimDeliveriesPG

// RecordLocatedPG is the statement that records outcomes whose queue rows' places are known, on
// PostgreSQL, for a spec of its plan: $1-$9 as recordDeliveriesArgs has them.
var RecordLocatedPG = "WITH " + recordDeliveriesPG(1, nil) + " SELECT COUNT(*) FROM f"
