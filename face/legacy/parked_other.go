//go:build !unix

package legacyface

import "net"

// peerClosed cannot peek here: a failed keep-alive write tells instead.
func peerClosed(net.Conn) bool { return false }
