//go:build unix

package legacyface

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// peerClosed tells a connection whose client closed it from one that is
// merely quiet, or that carries unread bytes.
func TestPeerClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if peerClosed(server) {
		t.Fatal("a quiet open connection reported closed")
	}
	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	awaitReadable(t, server)
	if peerClosed(server) {
		t.Fatal("a connection with an unread byte reported closed")
	}
	var b [1]byte
	if _, err := server.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	client.Close()
	awaitReadable(t, server) // the end of stream arrived
	if !peerClosed(server) {
		t.Fatal("a connection its client closed reported open")
	}
}

// awaitReadable blocks until c has something to read (or its end).
func awaitReadable(t *testing.T, c net.Conn) {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	if err := rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EWOULDBLOCK)
	}); err != nil {
		t.Fatal(err)
	}
}
