package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// APIKeyUse is an API key with the time of its most recent logged request.
type APIKeyUse struct {
	APIKey
	// LastUsedAt is nil for a key never used (or whose requests' logs are gone).
	LastUsedAt *time.Time
}

// ListAPIKeyUses returns a project's keys, newest first, revoked ones included, each with its
// last use, found through the API log's (project, key) index.
func (s *Store) ListAPIKeyUses(ctx context.Context, projectID string) ([]APIKeyUse, error) {
	keys, err := s.ListAPIKeys(ctx, projectID)
	if err != nil {
		return nil, err
	}
	out := make([]APIKeyUse, len(keys))
	for i, k := range keys {
		out[i].APIKey = k
		var last []time.Time
		if err := s.q(ctx).Model(&APILog{}).Where("project_id = ? AND key_id = ?", projectID, k.ID).
			Order("id DESC").Limit(1).Pluck("created_at", &last).Error; err != nil {
			return nil, translate(err, "api key last use")
		}
		if len(last) == 1 {
			out[i].LastUsedAt = &last[0]
		}
	}
	return out, nil
}

// GetAPIKey returns one of a project's keys.
func (s *Store) GetAPIKey(ctx context.Context, projectID, id string) (*APIKey, error) {
	var k APIKey
	if err := s.q(ctx).Where("id = ? AND project_id = ?", id, projectID).Take(&k).Error; err != nil {
		return nil, translate(err, "get api key")
	}
	return &k, nil
}

// APILogFilter narrows a listing of the API log; zero fields do not filter.
type APILogFilter struct {
	// StatusMin and StatusMax bound the response status (inclusive).
	StatusMin, StatusMax int
	// Path keeps requests whose path contains it.
	Path string
	// Method is an HTTP method.
	Method string
	// KeyID keeps one key's requests.
	KeyID string
	// From and To bound the request's time: From <= time < To.
	From, To *time.Time
}

// ListAPILogPage returns one page of a project's API log, newest first, as filtered. Its cursors
// are opaque like every other list's.
func (s *Store) ListAPILogPage(ctx context.Context, projectID string, f APILogFilter, p Page) ([]APILog, Cursors, error) {
	q := s.q(ctx).Model(&APILog{}).Where("project_id = ?", projectID)
	if f.KeyID != "" {
		q = q.Where("key_id = ?", f.KeyID)
	}
	if f.Method != "" {
		q = q.Where("method = ?", strings.ToUpper(f.Method))
	}
	if f.Path != "" {
		q = q.Where(`path LIKE ? ESCAPE '\'`, "%"+likeEscaper.Replace(f.Path)+"%")
	}
	if f.StatusMin > 0 {
		q = q.Where("status >= ?", f.StatusMin)
	}
	if f.StatusMax > 0 {
		q = q.Where("status <= ?", f.StatusMax)
	}
	if f.From != nil {
		q = q.Where("created_at >= ?", *f.From)
	}
	if f.To != nil {
		q = q.Where("created_at < ?", *f.To)
	}
	return paginateSerial(q, p, func(l *APILog) int64 { return l.ID })
}

// GetAPILog returns one request of a project's API log.
func (s *Store) GetAPILog(ctx context.Context, projectID string, id int64) (*APILog, error) {
	var l APILog
	if err := s.q(ctx).Where("id = ? AND project_id = ?", id, projectID).Take(&l).Error; err != nil {
		return nil, translate(err, "get api log")
	}
	return &l, nil
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// paginateSerial is paginate for tables whose id is an auto-increment integer.
func paginateSerial[T any](q *gorm.DB, p Page, idOf func(*T) int64) ([]T, Cursors, error) {
	return paginateKeyed(q, p, func(r *T) string { return strconv.FormatInt(idOf(r), 10) }, func(id string) (any, bool) {
		n, err := strconv.ParseInt(id, 10, 64)
		return n, err == nil && n > 0
	})
}
