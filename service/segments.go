package service

import "unicode/utf16"

// Encodings of a message body.
const (
	EncodingGSM7 = "gsm7"
	EncodingUCS2 = "ucs2"
)

// Message types.
const (
	TypeSMS = "sms"
	TypeMMS = "mms"
)

// Segment sizes (decisions §5): a GSM-7 body fits 160 septets in one segment and 153 per part of
// a multi-part message (the rest of each part carries the concatenation header); a UCS-2 body 70
// UTF-16 code units in one segment and 67 per part.
const (
	gsmSingle  = 160
	gsmPart    = 153
	ucsSingle  = 70
	ucsPart    = 67
	maxSMSSegs = 10
)

// gsmBasic is the GSM 03.38 default alphabet (one septet each); gsmExtension the characters
// reached through the escape code (two septets each).
var (
	gsmBasic = setOf("@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
		"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà")
	gsmExtension = setOf("\f^{}\\[~]|€")
)

// gsmASCII is the septets of each ASCII character in GSM-7 (0: none, the character is not in
// it), so that the usual body is segmented without a map lookup per character.
var gsmASCII = func() (t [128]uint8) {
	for r := range t {
		t[r] = gsmSeptetsOf(rune(r))
	}
	return t
}()

// gsmSeptets is the septets of r in GSM-7: 1 in the default alphabet, 2 in the extension, 0 when
// r is in neither.
func gsmSeptets(r rune) int {
	if r >= 0 && r < 128 {
		return int(gsmASCII[r])
	}
	return int(gsmSeptetsOf(r))
}

func gsmSeptetsOf(r rune) uint8 {
	switch {
	case gsmBasic[r]:
		return 1
	case gsmExtension[r]:
		return 2
	}
	return 0
}

func setOf(s string) map[rune]bool {
	m := map[rune]bool{}
	for _, r := range s {
		m[r] = true
	}
	return m
}

// Segmentation is how a body travels as SMS.
type Segmentation struct {
	// Encoding is EncodingGSM7 when every character is in the GSM-7 alphabet, else EncodingUCS2.
	Encoding string
	// Segments is the number of SMS segments; 0 for an empty body.
	Segments int
}

// Segment counts the SMS segments of a body. Parts are packed as handsets and SMSCs do: a GSM-7
// escape pair (an extension character) or a UTF-16 surrogate pair (an emoji) is never split
// between two parts, so such a character that does not fit in a part's last unit starts the next.
func Segment(body string) Segmentation {
	gsm := true
	for _, r := range body {
		if gsmSeptets(r) == 0 {
			gsm = false
			break
		}
	}
	if gsm {
		return Segmentation{Encoding: EncodingGSM7, Segments: pack(body, gsmSingle, gsmPart, gsmSeptets)}
	}
	return Segmentation{Encoding: EncodingUCS2, Segments: pack(body, ucsSingle, ucsPart, func(r rune) int {
		if utf16.RuneLen(r) == 2 {
			return 2
		}
		return 1 // invalid UTF-8 decodes to U+FFFD, one unit
	})}
}

// pack counts the parts of a body whose characters cost units each.
func pack(body string, single, part int, units func(rune) int) int {
	total := 0
	for _, r := range body {
		total += units(r)
	}
	switch {
	case total == 0:
		return 0
	case total <= single:
		return 1
	}
	parts, used := 1, 0
	for _, r := range body {
		u := units(r)
		if used+u > part {
			parts++
			used = 0
		}
		used += u
	}
	return parts
}

// MessageType is the type a message travels as: MMS when it has attachments or its body needs
// more than 10 segments, SMS otherwise.
func MessageType(seg Segmentation, attachments int) string {
	if attachments > 0 || seg.Segments > maxSMSSegs {
		return TypeMMS
	}
	return TypeSMS
}
