//go:build unix

package webhooks

import (
	"net"
	"syscall"
)

// socketPeek tells whether the peer of an idle connection has closed it (or sent something unasked)
// by a peek at the socket that does not wait.
type socketPeek struct {
	raw    syscall.RawConn
	fn     func(fd uintptr) bool
	isOpen bool
}

func newSocketPeek(c net.Conn) *socketPeek {
	p := &socketPeek{}
	if sc, ok := c.(syscall.Conn); ok {
		p.raw, _ = sc.SyscallConn()
	}
	p.fn = func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		p.isOpen = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true
	}
	return p
}

// open reports whether the connection may carry another request: nothing to read, and the peer
// has not closed it.
func (p *socketPeek) open() bool {
	if p.raw == nil {
		return true
	}
	p.isOpen = false
	return p.raw.Read(p.fn) == nil && p.isOpen
}
