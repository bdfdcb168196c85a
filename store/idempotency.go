package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// IdempotencyRecord remembers the response to a POST sent with an Idempotency-Key.
type IdempotencyRecord struct {
	ProjectID   string `gorm:"primaryKey"`
	Key         string `gorm:"primaryKey"`
	RequestHash string
	// Status is 0 while the first request is still being served.
	Status      int
	Body        []byte
	ContentType string
	CreatedAt   time.Time
}

// TableName names the table behind IdempotencyRecord.
func (IdempotencyRecord) TableName() string { return "idempotency_keys" }

// ClaimIdempotencyKey reserves (project, key) for a request. It returns nil when the caller owns the
// key and must serve the request, or the earlier record when one exists (finished, or in flight
// when its Status is 0). Records older than ttl are replaced.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, projectID, key, requestHash string, ttl time.Duration) (*IdempotencyRecord, error) {
	var prior *IdempotencyRecord
	err := s.Tx(ctx, func(tx *Store) error {
		var r IdempotencyRecord
		err := tx.q(ctx).Where("project_id = ? AND key = ?", projectID, key).Take(&r).Error
		switch {
		case err == nil && time.Since(r.CreatedAt) < ttl:
			prior = &r
			return nil
		case err == nil:
			if err := tx.q(ctx).Delete(&r).Error; err != nil {
				return translate(err, "expire idempotency key")
			}
		case !errors.Is(translate(err, ""), ErrNotFound):
			return translate(err, "read idempotency key")
		}
		rec := IdempotencyRecord{ProjectID: projectID, Key: key, RequestHash: requestHash, CreatedAt: now()}
		return translate(tx.q(ctx).Create(&rec).Error, "claim idempotency key")
	})
	if errors.Is(err, ErrDuplicate) {
		// Another request claimed it between our read and insert: it is in flight.
		return &IdempotencyRecord{ProjectID: projectID, Key: key}, nil
	}
	if err != nil {
		return nil, err
	}
	return prior, nil
}

// CompleteIdempotencyKey stores the response of the request that claimed the key.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, projectID, key string, status int, contentType string, body []byte) error {
	return translate(s.q(ctx).Model(&IdempotencyRecord{}).Where("project_id = ? AND key = ?", projectID, key).
		Updates(map[string]any{"status": status, "content_type": contentType, "body": body}).Error,
		fmt.Sprintf("complete idempotency key %s", key))
}

// ReleaseIdempotencyKey forgets a claim whose request produced nothing worth replaying (a server
// error), so the client may retry with the same key.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, projectID, key string) error {
	return translate(s.q(ctx).Where("project_id = ? AND key = ? AND status = 0", projectID, key).
		Delete(&IdempotencyRecord{}).Error, "release idempotency key")
}

// PurgeIdempotencyKeys deletes the records created before cutoff and reports how many.
func (s *Store) PurgeIdempotencyKeys(ctx context.Context, cutoff time.Time) (int64, error) {
	res := s.q(ctx).Where("created_at < ?", cutoff.UTC()).Delete(&IdempotencyRecord{})
	return res.RowsAffected, translate(res.Error, "purge idempotency keys")
}
