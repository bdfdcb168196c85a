package store

import (
	"context"

	"github.com/switchboard/switchboard/kit"
)

// Type prefixes of the identifiers the store mints.
const (
	PrefixProject = "prj"
	PrefixAPIKey  = "key"
	PrefixAccount = "acct"
	PrefixUser    = "usr"
	PrefixContact = "ctc"
)

// NewID returns a new TypeID with the given prefix, time-ordered within the process (see kit.NewID).
func NewID(prefix string) string { return kit.NewID(prefix) }

// Batcher coalesces concurrent calls into shared transactions (see kit.Batcher).
type Batcher[T, R any] = kit.Batcher[T, R]

// NewBatcher returns a batcher of at most max items per flush and at most parallel flushes at a
// time (see kit.NewBatcher).
func NewBatcher[T, R any](max, parallel int, flush func(ctx context.Context, items []T) ([]R, error)) *Batcher[T, R] {
	return kit.NewBatcher(max, parallel, flush)
}
