package store

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// Metadata is a resource's key-value metadata, stored as a JSON object in a text column.
type Metadata map[string]string

// Value encodes the map as JSON; nil is stored as {}.
func (m Metadata) Value() (driver.Value, error) {
	if m == nil {
		return "{}", nil
	}
	b, err := json.Marshal(map[string]string(m))
	return string(b), err
}

// Scan decodes a JSON object from a text or binary column.
func (m *Metadata) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*m = Metadata{}
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("store: metadata from %T", src)
	}
	out := Metadata{}
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("store: decode metadata: %w", err)
	}
	*m = out
	return nil
}
