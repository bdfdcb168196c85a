package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// APILog is one authenticated request, as the operator's `switchboard logs` shows it.
type APILog struct {
	ID             int64 `gorm:"primaryKey;autoIncrement"`
	ProjectID      string
	KeyID          string
	RequestID      string
	Method         string
	Path           string
	Status         int
	DurationMicros int64
	// Query is the request's query string (no "?"); IP and UserAgent are the client's.
	Query     string
	IP        string
	UserAgent string
	// ErrorType is the error envelope's type of a refused or failed request; empty on success.
	ErrorType string
	CreatedAt time.Time
}

// InsertAPILogs writes a batch of request logs in one statement. On PostgreSQL outside a
// transaction it is a COPY, which PostgreSQL neither parses nor plans per batch (gorm's multi-row
// VALUES was a new statement for every batch size, planned afresh, that crowded the hot paths'
// statements out of pgx's statement cache); the logs' IDs are then left unset. Elsewhere it is
// gorm's insert, which sets them.
func (s *Store) InsertAPILogs(ctx context.Context, logs []APILog) error {
	if len(logs) == 0 {
		return nil
	}
	if s.dialect == Postgres && !s.inTx() {
		err := s.pgxConn(ctx, func(c *pgx.Conn) error {
			_, err := c.CopyFrom(ctx, pgx.Identifier{"api_logs"}, apiLogColumns, pgx.CopyFromSlice(len(logs), func(i int) ([]any, error) {
				l := &logs[i]
				return []any{l.ProjectID, l.KeyID, l.RequestID, l.Method, l.Path, int32(l.Status), l.DurationMicros, l.Query,
					l.IP, l.UserAgent, l.ErrorType, l.CreatedAt}, nil
			}))
			return err
		})
		return translate(err, "insert api logs")
	}
	return translate(s.q(ctx).CreateInBatches(logs, 500).Error, "insert api logs")
}

// apiLogColumns are the columns InsertAPILogs copies, in the order of its rows.
var apiLogColumns = []string{"project_id", "key_id", "request_id", "method", "path", "status", "duration_micros", "query",
	"ip", "user_agent", "error_type", "created_at"}

// ListAPILogs returns a project's most recent request logs, newest first.
func (s *Store) ListAPILogs(ctx context.Context, projectID string, limit int) ([]APILog, error) {
	if limit <= 0 {
		limit = 50
	}
	var out []APILog
	if err := s.q(ctx).Where("project_id = ?", projectID).Order("id DESC").Limit(limit).Find(&out).Error; err != nil {
		return nil, translate(err, "list api logs")
	}
	return out, nil
}
