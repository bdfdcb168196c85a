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
	if len(m) == 0 {
		return "{}", nil // what json.Marshal writes for an empty map, without it
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
		if v == "{}" {
			*m = Metadata{}
			return nil
		}
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("store: metadata from %T", src)
	}
	return m.decode(b)
}

// ScanBytes decodes a JSON object from the bytes of a text column as pgx reads them
// (pgtype.BytesScanner), without copying them into a string first; nil is NULL.
func (m *Metadata) ScanBytes(src []byte) error {
	if src == nil {
		return m.Scan(nil)
	}
	return m.decode(src)
}

// decode sets m from the JSON b. Most metadata is empty: "{}" needs no decoder.
func (m *Metadata) decode(b []byte) error {
	if string(b) == "{}" {
		*m = Metadata{}
		return nil
	}
	out := Metadata{}
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("store: decode metadata: %w", err)
	}
	*m = out
	return nil
}
