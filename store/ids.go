package store

import (
	"fmt"

	"go.jetify.com/typeid"
)

// Type prefixes of the identifiers the store mints.
const (
	PrefixProject = "prj"
	PrefixAPIKey  = "key"
	PrefixAccount = "acct"
	PrefixUser    = "usr"
	PrefixContact = "ctc"
)

// NewID returns a new TypeID (UUIDv7, so ids sort by creation time) with the given prefix.
func NewID(prefix string) string {
	id, err := typeid.WithPrefix(prefix)
	if err != nil {
		// Only an invalid constant prefix can fail; that is a programming error.
		panic(fmt.Sprintf("store: new id with prefix %q: %v", prefix, err))
	}
	return id.String()
}
