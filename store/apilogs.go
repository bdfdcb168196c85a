package store

import (
	"context"
	"time"
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

// InsertAPILogs writes a batch of request logs in one statement.
func (s *Store) InsertAPILogs(ctx context.Context, logs []APILog) error {
	if len(logs) == 0 {
		return nil
	}
	return translate(s.q(ctx).CreateInBatches(logs, 500).Error, "insert api logs")
}

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
