//go:build !unix

package webhooks

import "net"

// socketPeek would tell whether the peer of an idle connection has closed it; without a peek at
// the socket, it assumes not (a request whose write fails on a reused connection is sent again).
type socketPeek struct{}

func newSocketPeek(net.Conn) *socketPeek { return &socketPeek{} }

func (*socketPeek) open() bool { return true }

// send leaves the write to c.Write.
func (*socketPeek) send(net.Conn, []byte) (int, error, bool) { return 0, nil, false }
