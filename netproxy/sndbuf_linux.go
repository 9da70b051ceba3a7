package netproxy

import (
	"net"
	"net/netip"
)

// clientSendBuffer is the SO_SNDBUF the proxy asks for on a connection to a
// client on loopback; Linux doubles it for bookkeeping, to 192 KiB.
//
// Left alone, Linux grows a socket's send buffer up to net.ipv4.tcp_wmem's
// maximum (4 MiB by default), and a relay that splices as fast as the
// upstream delivers keeps it full: megabytes of a download sit between the
// proxy and the client, cold in the CPU caches by the time the client copies
// them out. On a 2-core VM (BenchmarkDownload, perf) that cost the relay
// twice the CPU per byte of a direct connection, and half its throughput;
// the client's copy of the same bytes took up to twice as long. A bounded
// buffer makes the relay wait for the client instead of running megabytes
// ahead of it.
//
// The size was measured, not derived: with clients reading 16 KiB to
// 256 KiB at a time, 64 to 128 KiB all did far better than the default, and
// 96 KiB best overall. It must stay well above one loopback segment
// (64 KiB): a buffer that holds only one waits for the client's delayed
// ACK after each, and a download crawls at a few MB/s. A loopback round
// trip takes microseconds, so the buffer still covers the link's
// bandwidth-delay product many times over.
//
// Only the client side is bounded: the upstream connection may cross a
// long-haul link, whose window needs the kernel's autotuning.
const clientSendBuffer = 96 << 10

// boundClientSendQueue applies clientSendBuffer to c if it is a TCP
// connection from a loopback address (the sandbox's own, see doc.go); an
// error is ignored, as the default buffer only costs speed.
func boundClientSendQueue(c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	ap, err := netip.ParseAddrPort(tc.RemoteAddr().String())
	if err != nil || !ap.Addr().Unmap().IsLoopback() {
		return
	}
	tc.SetWriteBuffer(clientSendBuffer)
}
