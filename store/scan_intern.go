package store

import (
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// textInterner scans the text columns of a query's rows as pgx would into their *string and
// **string destinations, except that a column whose text is the same as in the previous row reuses
// that row's string instead of allocating another. The batches of the hot paths repeat most of
// their text from row to row (the project, the account, the sender's number and its type, the
// status, the encoding, the body of a campaign…), and pgx allocates a string for every text
// column of every row: about 30 allocations a message in the dispatch claim, of which two thirds
// held a string the previous row already had.
//
// For each row, scan: dest swaps the row's text destinations for raw byte slots (pgx leaves each
// slot pointing into its read buffer, valid until the next row), rows.Scan fills them with the
// rest, and assign sets the strings.
type textInterner struct {
	raw  []pgtype.DriverBytes
	prev []string
	to   []any
}

// scan scans the current row of rows into dest, as rows.Scan(dest...) would.
func (t *textInterner) scan(rows pgx.Rows, dest []any) error {
	if err := rows.Scan(t.dest(dest)...); err != nil {
		return err
	}
	return t.assign()
}

// dest returns dest with each *string and **string destination replaced by a raw slot.
func (t *textInterner) dest(dest []any) []any {
	t.to = t.to[:0]
	for _, d := range dest {
		switch d.(type) {
		case *string, **string:
			t.to = append(t.to, d)
		}
	}
	if len(t.raw) < len(t.to) {
		// Sized before any slot is taken: the slots are pointers into raw.
		t.raw, t.prev = make([]pgtype.DriverBytes, len(t.to)), append(t.prev, make([]string, len(t.to)-len(t.prev))...)
	}
	k := 0
	for i, d := range dest {
		switch d.(type) {
		case *string, **string:
			dest[i] = &t.raw[k]
			k++
		}
	}
	return dest
}

// assign sets the row's text destinations from their raw slots (right after rows.Scan).
func (t *textInterner) assign() error {
	for k, to := range t.to {
		b := t.raw[k]
		switch p := to.(type) {
		case *string:
			if b == nil {
				return fmt.Errorf("store: cannot scan NULL into *string (column %d of the row's text)", k)
			}
			*p = t.intern(k, b)
		case **string:
			if b == nil {
				*p = nil
				continue
			}
			s := t.intern(k, b)
			*p = &s
		}
	}
	return nil
}

// intern returns the text b of slot k, the previous row's string when it is the same.
func (t *textInterner) intern(k int, b []byte) string {
	if string(b) == t.prev[k] {
		return t.prev[k]
	}
	s := string(b)
	t.prev[k] = s
	return s
}
