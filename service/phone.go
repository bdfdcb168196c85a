package service

import (
	"errors"
	"regexp"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// e164 is the contract's pattern of an E.164 number.
var e164 = regexp.MustCompile(`^\+[1-9]\d{6,14}$`)

// shortCode is a 5 or 6 digit short code.
var shortCode = regexp.MustCompile(`^\d{5,6}$`)

// ErrNotE164 is returned for a string that is not a possible phone number.
var ErrNotE164 = errors.New("is not a valid E.164 phone number")

// NormalizeE164 parses a phone number as people and carriers write it ("+1 (415) 555-0123",
// "+14155550123", or a national number, read as North American) and returns its E.164 form.
// It checks that the number is possible (its length fits its country), not that it is assigned:
// the carrier reports that (failure_reason invalid_mobile_number).
func NormalizeE164(s string) (string, error) {
	s = strings.TrimSpace(s)
	if isNANP(s) {
		// The common case, spared the parse: such a number is its own E.164 form (see isNANP;
		// checked against the parse for every four-digit prefix in phone_test.go).
		return s, nil
	}
	return normalizeParsed(s)
}

// normalizeParsed is NormalizeE164 of a trimmed string, through libphonenumber's parse.
func normalizeParsed(s string) (string, error) {
	if s == "" || len(s) > 64 {
		return "", ErrNotE164
	}
	n, err := phonenumbers.Parse(s, "US")
	if err != nil || !phonenumbers.IsPossibleNumber(n) {
		return "", ErrNotE164
	}
	out := phonenumbers.Format(n, phonenumbers.E164)
	if !e164.MatchString(out) {
		return "", ErrNotE164
	}
	// A number whose canonical form reads back as another (a national prefix dropped twice) is
	// not one we can store: normalising must be idempotent. When s is its canonical form already,
	// reading it back would repeat the parse above.
	if out == s {
		return out, nil
	}
	if again, err := phonenumbers.Parse(out, "US"); err != nil || !phonenumbers.IsPossibleNumber(again) ||
		phonenumbers.Format(again, phonenumbers.E164) != out {
		return "", ErrNotE164
	}
	return out, nil
}

// normalizeAddress normalises one of our numbers as a carrier reports it: a short code stays as
// it is, anything else becomes E.164.
func normalizeAddress(s string) (string, error) {
	s = strings.TrimSpace(s)
	if shortCode.MatchString(s) {
		return s, nil
	}
	return NormalizeE164(s)
}
