//go:build !linux

package netproxy

import "net"

// boundClientSendQueue leaves the send buffer to the system: the bound in
// sndbuf_linux.go answers Linux's autotuning and was measured only there.
func boundClientSendQueue(net.Conn) {}
