package store

import (
	"encoding/base64"
	"strings"

	"gorm.io/gorm"
)

// Page selects one page of a newest-first list. After and Before are cursors from an earlier
// Cursors; at most one may be set.
type Page struct {
	// After continues forwards (towards older items) from a NextCursor.
	After string
	// Before goes back (towards newer items) from a PreviousCursor.
	Before string
	// Limit is the page size. Defaults to 25; capped at 100.
	Limit int
}

// Cursors are the opaque continuation points of a page; nil where there is nothing more.
type Cursors struct {
	Next     *string
	Previous *string
}

const (
	defaultPageSize = 25
	maxPageSize     = 100
)

func encodeCursor(id string) *string {
	c := base64.RawURLEncoding.EncodeToString([]byte("v1:" + id))
	return &c
}

func decodeCursor(c, param string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), "v1:") || len(b) < 4 || len(b) > 100 {
		return "", &CursorError{Param: param}
	}
	return string(b[3:]), nil
}

// decodeKey decodes a cursor into its id column's value.
func decodeKey(c, param string, key func(string) (any, bool)) (any, error) {
	id, err := decodeCursor(c, param)
	if err != nil {
		return nil, err
	}
	v, ok := key(id)
	if !ok {
		return nil, &CursorError{Param: param}
	}
	return v, nil
}

// paginate runs q (already filtered to one tenant's rows) newest first by id. Ids are
// UUIDv7-based TypeIDs of one prefix, so their text order is their creation order.
func paginate[T any](q *gorm.DB, p Page, idOf func(*T) string) ([]T, Cursors, error) {
	return paginateKeyed(q, p, idOf, func(id string) (any, bool) { return id, true })
}

// paginateKeyed is paginate for any id column: key converts a cursor's id back to the column's
// type, and reports false for one this store cannot have issued.
func paginateKeyed[T any](q *gorm.DB, p Page, idOf func(*T) string, key func(string) (any, bool)) ([]T, Cursors, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = defaultPageSize
	}
	if limit > maxPageSize {
		limit = maxPageSize
	}
	var rows []T
	var cur Cursors
	if p.After != "" && p.Before != "" {
		return nil, cur, &CursorError{Param: "before", Reason: "cannot be combined with after"}
	}
	switch {
	case p.Before != "":
		id, err := decodeKey(p.Before, "before", key)
		if err != nil {
			return nil, cur, err
		}
		if err := q.Where("id > ?", id).Order("id ASC").Limit(limit + 1).Find(&rows).Error; err != nil {
			return nil, cur, translate(err, "list")
		}
		more := len(rows) > limit
		if more {
			rows = rows[:limit]
		}
		for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
			rows[i], rows[j] = rows[j], rows[i]
		}
		// The cursor's own item is older than this page, so a non-empty page always has a next.
		if len(rows) > 0 {
			cur.Next = encodeCursor(idOf(&rows[len(rows)-1]))
		}
		if more {
			cur.Previous = encodeCursor(idOf(&rows[0]))
		}
	default:
		if p.After != "" {
			id, err := decodeKey(p.After, "after", key)
			if err != nil {
				return nil, cur, err
			}
			q = q.Where("id < ?", id)
		}
		if err := q.Order("id DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
			return nil, cur, translate(err, "list")
		}
		if len(rows) > limit {
			rows = rows[:limit]
			cur.Next = encodeCursor(idOf(&rows[len(rows)-1]))
		}
		// The cursor's own item is newer than this page, so a non-empty page has a previous.
		if p.After != "" && len(rows) > 0 {
			cur.Previous = encodeCursor(idOf(&rows[0]))
		}
	}
	if rows == nil {
		rows = []T{}
	}
	return rows, cur, nil
}
