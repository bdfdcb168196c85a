package kit

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.jetify.com/typeid"
)

// NewID returns a new TypeID with the given prefix. Its UUIDv7 is strictly increasing within this
// process (RFC 9562 §6.2 method 1: a 12-bit counter that restarts from a random value each
// millisecond and borrows the next millisecond when it runs out), so within one instance id order
// is creation order, which newest-first pagination relies on; across instances it is millisecond order.
func NewID(prefix string) string {
	var u [16]byte
	ms, seq := v7.next()
	binary.BigEndian.PutUint64(u[0:8], ms<<16|uint64(seq))
	u[6] = 0x70 | (u[6] & 0x0f) // version 7 over the counter's top nibble, which next keeps 0
	if _, err := rand.Read(u[8:]); err != nil {
		panic(fmt.Sprintf("kit: random id bits: %v", err))
	}
	u[8] = 0x80 | (u[8] & 0x3f) // RFC 9562 variant
	return idOf(prefix, u)
}

// checkedPrefixes holds the prefixes that typeid has accepted (see idOf).
var checkedPrefixes sync.Map

// idOf is the TypeID of prefix and the UUID u. The first id of a prefix is made by typeid, which
// checks the prefix; the others are written as typeid writes them, with its base32 encoding, but
// without its round trip through the UUID's text and the decoding of the suffix it made.
func idOf(prefix string, u [16]byte) string {
	if _, ok := checkedPrefixes.Load(prefix); !ok || prefix == "" {
		id, err := typeid.FromUUIDBytesWithPrefix(prefix, u[:])
		if err != nil {
			// Only an invalid constant prefix can fail; that is a programming error.
			panic(fmt.Sprintf("kit: new id with prefix %q: %v", prefix, err))
		}
		checkedPrefixes.Store(prefix, true)
		return id.String()
	}
	return appendedID(prefix, u)
}

// crockford is typeid's base32 alphabet (Crockford's, in lower case).
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// appendedID writes prefix, "_" and u in typeid's base32 (the 128 bits as 26 digits of 5 bits,
// most significant first, the first digit holding 3) in one allocation.
func appendedID(prefix string, u [16]byte) string {
	var digits [26]byte
	hi, lo := binary.BigEndian.Uint64(u[:8]), binary.BigEndian.Uint64(u[8:])
	for i := 25; i >= 0; i-- {
		digits[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	var b strings.Builder
	b.Grow(len(prefix) + 1 + len(digits))
	b.WriteString(prefix)
	b.WriteByte('_')
	b.Write(digits[:])
	return b.String()
}

// v7 is the process's monotonic UUIDv7 clock.
var v7 = &v7Clock{}

type v7Clock struct {
	mu     sync.Mutex
	lastMs uint64
	seq    uint16
}

// next returns the millisecond and 12-bit counter of the next id.
func (c *v7Clock) next() (uint64, uint16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ms := uint64(time.Now().UnixMilli())
	if ms > c.lastMs {
		var b [2]byte
		_, _ = rand.Read(b[:])
		c.lastMs, c.seq = ms, binary.BigEndian.Uint16(b[:])&0x07ff // leave room to count up
		return c.lastMs, c.seq
	}
	c.seq++
	if c.seq > 0x0fff {
		c.lastMs++
		c.seq = 0
	}
	return c.lastMs, c.seq
}
