"""Network attacks from inside a forgebox sandbox run with --net allow.

Usage: python3 attack.py 'OP ARG...' ['OP ARG...' ...]

Each operation prints one JSON line in the probe's format:
{"op": ..., "args": [...], "ok": bool, "errno": "EACCES", "err": "...", "out": "..."}.
The integration tests decode these lines and then check the host side.
"""

import errno
import json
import socket
import ssl
import struct
import sys

PROXY = ("127.0.0.1", 3128)
TIMEOUT = 3


def family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def tcp(host, port):
    """Connect straight to HOST:PORT, bypassing the proxy."""
    with socket.socket(family(host), socket.SOCK_STREAM) as s:
        s.settimeout(TIMEOUT)
        s.connect((host, int(port)))
    return ""


def mptcp(host, port):
    """Connect with MPTCP, which Landlock's TCP rules do not cover."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262) as s:
        s.settimeout(TIMEOUT)
        s.connect((host, int(port)))
    return ""


def bind(host, port):
    """Bind and listen: a server the proxy does not know of."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, int(port)))
        s.listen(1)
        return str(s.getsockname()[1])


def udp(host, port):
    """Send a datagram: UDP does not go through the proxy."""
    with socket.socket(family(host), socket.SOCK_DGRAM) as s:
        s.sendto(b"forgebox-escape", (host, int(port)))
    return ""


def dns_query(name):
    qid = 0x4242
    header = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    q = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    return header + q + struct.pack(">HH", 1, 1)


def dns(server, name):
    """Ask a DNS server directly over UDP and wait for its answer."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(TIMEOUT)
        s.sendto(dns_query(name), (server, 53))
        data, _ = s.recvfrom(512)
    return "answer of %d bytes" % len(data)


def dns_tcp(server, name):
    """Ask a DNS server directly over TCP."""
    q = dns_query(name)
    with socket.create_connection((server, 53), timeout=TIMEOUT) as s:
        s.sendall(struct.pack(">H", len(q)) + q)
        data = s.recv(512)
    return "answer of %d bytes" % len(data)


def resolve(name):
    """Resolve a name with the system's resolver."""
    infos = socket.getaddrinfo(name, 80, proto=socket.IPPROTO_TCP)
    return ",".join(sorted({i[4][0] for i in infos}))


def raw():
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP):
        return ""


def packet():
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3)):
        return ""


def socks5(host, port):
    """A SOCKS5 CONNECT by domain name; out is the reply code."""
    with socket.create_connection(PROXY, timeout=TIMEOUT) as s:
        s.sendall(b"\x05\x01\x00")
        if s.recv(2) != b"\x05\x00":
            raise OSError("the proxy refused SOCKS5 without authentication")
        h = host.encode()
        s.sendall(b"\x05\x01\x00\x03" + bytes([len(h)]) + h + struct.pack(">H", int(port)))
        reply = s.recv(4)
    return "%d" % reply[1]


def sni(host, port, server_name, cafile):
    """Open a CONNECT tunnel to HOST:PORT, then start TLS for another name.

    With the server's certificate valid for both names, nothing but the
    proxy can stop the exchange.
    """
    with socket.create_connection(PROXY, timeout=TIMEOUT) as s:
        s.sendall(("CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (host, port, host, port)).encode())
        status = s.recv(4096).split(b"\r\n", 1)[0].decode()
        if " 200 " not in status + " ":
            raise OSError("CONNECT answered %r" % status)
        ctx = ssl.create_default_context(cafile=cafile)
        with ctx.wrap_socket(s, server_hostname=server_name) as t:
            t.sendall(("GET / HTTP/1.0\r\nHost: %s\r\n\r\n" % server_name).encode())
            return t.recv(4096).split(b"\r\n", 1)[0].decode()


OPS = {
    "tcp": tcp,
    "mptcp": mptcp,
    "bind": bind,
    "udp": udp,
    "dns": dns,
    "dns-tcp": dns_tcp,
    "resolve": resolve,
    "raw": raw,
    "packet": packet,
    "socks5": socks5,
    "sni": sni,
}


def main():
    for spec in sys.argv[1:]:
        op, *args = spec.split()
        v = {"op": op, "args": args, "ok": False}
        try:
            v["out"] = OPS[op](*args)
            v["ok"] = True
        except socket.gaierror as e:
            v["errno"] = "EAI"
            v["err"] = str(e)
        except ssl.SSLError as e:
            # Its errno is an OpenSSL code, not a system one.
            v["errno"] = "SSL"
            v["err"] = str(e)
        except OSError as e:
            if e.errno in errno.errorcode:
                v["errno"] = errno.errorcode[e.errno]
            v["err"] = str(e)
        print(json.dumps(v), flush=True)


main()
