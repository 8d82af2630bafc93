//go:build unix

package legacyface

import (
	"errors"
	"net"
	"syscall"
)

// peerClosed reports whether the client closed (or reset) a taken-over
// connection, without blocking: a peek at the socket finds its end of
// stream. Nothing else reads a parked connection (the client sent its one
// request, with Connection: close for the answer), so this is how the
// keep-alive ticker notices a client gone at its next beat, rather than
// only when a write fails (the first write after the client closed is
// usually still accepted by the kernel).
func peerClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false // e.g. TLS: a failed write tells instead
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var b [1]byte
	_ = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed = n == 0 // end of stream; a byte sent (a pipelined request) is no close
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		default:
			closed = true // reset, or the socket is unusable
		}
		return true // never wait for readability
	})
	return closed
}
