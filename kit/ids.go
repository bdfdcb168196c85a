package kit

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
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
	ms, seq, rnd := v7.next()
	binary.BigEndian.PutUint64(u[0:8], ms<<16|uint64(seq))
	u[6] = 0x70 | (u[6] & 0x0f) // version 7 over the counter's top nibble, which next keeps 0
	binary.BigEndian.PutUint64(u[8:], rnd)
	u[8] = 0x80 | (u[8] & 0x3f) // RFC 9562 variant
	return idOf(prefix, u)
}

// idOf is the TypeID of prefix and the UUID u. An id whose prefix is not one that typeid accepts
// without a check of its own (plainPrefix), or is empty, is made by typeid, which refuses an
// invalid prefix; the others are written as typeid writes them, with its base32 encoding, but
// without its round trip through the UUID's text and the decoding of the suffix it made.
func idOf(prefix string, u [16]byte) string {
	if !plainPrefix(prefix) {
		id, err := typeid.FromUUIDBytesWithPrefix(prefix, u[:])
		if err != nil {
			// Only an invalid constant prefix can fail; that is a programming error.
			panic(fmt.Sprintf("kit: new id with prefix %q: %v", prefix, err))
		}
		return id.String()
	}
	return appendedID(prefix, u)
}

// plainPrefix reports whether prefix is a non-empty TypeID prefix as typeid checks them: at most
// 63 characters of a–z and underscores, neither first nor last an underscore.
func plainPrefix(prefix string) bool {
	if prefix == "" || len(prefix) > 63 || prefix[0] == '_' || prefix[len(prefix)-1] == '_' {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if c := prefix[i]; (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return true
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
	// rnd is a ChaCha8 generator seeded from crypto/rand (math/rand/v2's, cryptographically
	// strong), made at the first id: each id's 62 random bits cost ~50 ns from crypto/rand.
	rnd *mrand.ChaCha8
}

// next returns the millisecond and 12-bit counter of the next id, and 64 random bits for it.
func (c *v7Clock) next() (uint64, uint16, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ms := uint64(time.Now().UnixMilli())
	if ms > c.lastMs {
		c.lastMs, c.seq = ms, uint16(c.random()>>48)&0x07ff // leave room to count up
	} else if c.seq++; c.seq > 0x0fff {
		c.lastMs++
		c.seq = 0
	}
	return c.lastMs, c.seq, c.random()
}

// random returns 64 random bits. c.mu is held.
func (c *v7Clock) random() uint64 {
	if c.rnd == nil {
		var seed [32]byte
		if _, err := rand.Read(seed[:]); err != nil {
			panic(fmt.Sprintf("kit: random id bits: %v", err))
		}
		c.rnd = mrand.NewChaCha8(seed)
	}
	return c.rnd.Uint64()
}
