//go:build unix

package webhooks

import (
	"net"
	"os"
	"syscall"
)

// socketPeek tells whether the peer of an idle connection has closed it (or sent something unasked)
// by a peek at the socket that does not wait; it also writes requests (send).
type socketPeek struct {
	raw    syscall.RawConn
	fn     func(fd uintptr) bool
	isOpen bool
	// send's state, for sendFn (made once per connection, as fn).
	sendFn func(fd uintptr) bool
	out    []byte
	sent   int
	began  bool
	errno  error
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
	p.sendFn = func(fd uintptr) bool {
		if p.began {
			return true // the answer can be read (or the wait ended: the read will say why)
		}
		p.began = true
		for len(p.out) > 0 {
			n, err := syscall.Write(int(fd), p.out)
			if n > 0 {
				p.sent += n
				p.out = p.out[n:]
			}
			switch {
			case err == syscall.EINTR:
			case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
				return true // the socket's buffer is full: the rest goes through the connection's Write
			case err != nil:
				p.errno = err
				return true
			case n <= 0:
				return true
			}
		}
		return false // written: wait for the answer
	}
	return p
}

// send writes b on c (the connection the peek was made for) and waits until the answer can be read,
// in one wait: a write through c and then a read would try the socket once before waiting (a read
// system call that finds nothing, as the answer cannot be there yet). It returns how many bytes it
// wrote and the error c.Write would return (nil with n < len(b) when the rest is to be written by
// c.Write); handled false when it wrote nothing and left the write to c.Write (no raw connection,
// the deadline passed or the connection was closed before it began). The read deadline bounds the
// wait; when the wait ends early (deadline, close) the next read says why.
func (p *socketPeek) send(c net.Conn, b []byte) (n int, err error, handled bool) {
	if p.raw == nil {
		return 0, nil, false
	}
	p.out, p.sent, p.began, p.errno = b, 0, false, nil
	_ = p.raw.Read(p.sendFn)
	n, handled, errno := p.sent, p.began, p.errno
	p.out, p.errno = nil, nil
	if errno != nil { // as net.Conn's Write reports it
		err = &net.OpError{Op: "write", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(),
			Err: os.NewSyscallError("write", errno)}
	}
	return n, err, handled
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
