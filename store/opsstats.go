package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"go.jetify.com/typeid"
)

// OperatorStats are the figures an operator pages on, read from the database: they are the
// installation's, whichever instance reads them.
type OperatorStats struct {
	// Messages counts the messages created since the window's start by status and failure
	// reason (empty unless failed).
	Messages []MessageCount
	// Queues is each job queue's backlog: jobs due and waiting for a worker.
	Queues []QueueBacklog
	// Webhooks is each endpoint's pending deliveries.
	Webhooks []EndpointBacklog
}

// MessageCount is how many messages have a status and failure reason.
type MessageCount struct {
	Status        string
	FailureReason string
	Count         int64
}

// QueueBacklog is a job queue's jobs that are due and not yet running, and how long the oldest
// of them has been due.
type QueueBacklog struct {
	Queue     string
	Available int64
	// OldestSeconds is how long the oldest available job has been due.
	OldestSeconds float64
}

// EndpointBacklog is a webhook endpoint's deliveries still pending (first attempt or retries).
type EndpointBacklog struct {
	EndpointID string
	ProjectID  string
	Pending    int64
	// OldestSeconds is the age of the oldest pending delivery.
	OldestSeconds float64
}

// OperatorStats reads the operator's figures; messages are counted from since on, through the
// primary key (ids are time-ordered), so the count never scans older rows.
func (s *Store) OperatorStats(ctx context.Context, since time.Time) (*OperatorStats, error) {
	out := &OperatorStats{}
	if err := s.q(ctx).Raw(`SELECT status, COALESCE(failure_reason, '') AS failure_reason, COUNT(*) AS count
		FROM messages WHERE id >= ? GROUP BY status, COALESCE(failure_reason, '')`, IDAt("msg", since)).
		Scan(&out.Messages).Error; err != nil {
		return nil, fmt.Errorf("store: count messages: %w", err)
	}
	// Every queue the workers run (River keeps them in river_queue), with its available jobs.
	if err := s.q(ctx).Raw(`SELECT q.name AS queue, COUNT(j.id) AS available,
		COALESCE(` + s.secondsSince("MIN(j.scheduled_at)") + `, 0) AS oldest_seconds
		FROM river_queue q LEFT JOIN river_job j ON j.queue = q.name AND j.state = 'available'
		GROUP BY q.name ORDER BY q.name`).Scan(&out.Queues).Error; err != nil {
		return nil, fmt.Errorf("store: queue backlog: %w", err)
	}
	// The pending deliveries are those of the webhook queue.
	if err := s.q(ctx).Raw(`SELECT d.endpoint_id, MIN(d.project_id) AS project_id, COUNT(*) AS pending, `+
		s.secondsSince("MIN(d.created_at)")+` AS oldest_seconds
		FROM webhook_queue q JOIN webhook_deliveries d ON d.id = q.delivery_id
		WHERE d.status = ? GROUP BY d.endpoint_id ORDER BY d.endpoint_id`, DeliveryPending).
		Scan(&out.Webhooks).Error; err != nil {
		return nil, fmt.Errorf("store: webhook backlog: %w", err)
	}
	return out, nil
}

// secondsSince is the SQL of the seconds from a timestamp expression to now.
func (s *Store) secondsSince(expr string) string {
	if s.dialect == SQLite {
		return "(julianday('now') - julianday(" + expr + ")) * 86400"
	}
	return "EXTRACT(EPOCH FROM (now() - " + expr + "))"
}

// IDAt is the smallest TypeID with prefix minted at t: every id minted at or after t sorts at
// or after it, so `id >= IDAt(p, t)` selects rows created since t through the primary key.
func IDAt(prefix string, t time.Time) string {
	var u [16]byte
	binary.BigEndian.PutUint64(u[0:8], uint64(max(0, t.UnixMilli()))<<16)
	u[6] = 0x70
	u[8] = 0x80
	id, err := typeid.FromUUIDBytesWithPrefix(prefix, u[:])
	if err != nil {
		panic(fmt.Sprintf("store: id floor with prefix %q: %v", prefix, err))
	}
	return id.String()
}
