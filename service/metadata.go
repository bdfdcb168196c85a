package service

import "unicode/utf8"

// MaxMetadataKeyLength is the longest metadata key, in characters (decisions §7: at most 50 keys,
// values of at most 500 characters; openapi.yaml bounds those, but OpenAPI 3.0 cannot bound a
// map's keys, so this rule is checked here).
const MaxMetadataKeyLength = 40

// CheckMetadataKeys refuses a metadata object with an empty key or one longer than
// MaxMetadataKeyLength, naming field (the object's path in the request) in the validation error.
func CheckMetadataKeys(field string, m map[string]string) error {
	for k := range m {
		if k == "" || utf8.RuneCountInString(k) > MaxMetadataKeyLength {
			return Invalid(field, "keys must be 1 to 40 characters long")
		}
	}
	return nil
}
