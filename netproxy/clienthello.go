package netproxy

import (
	"errors"
	"fmt"
	"io"
)

const (
	recordTypeHandshake     = 22
	handshakeClientHello    = 1
	extServerName           = 0
	extEncryptedClientHello = 0xfe0d
	maxClientHello          = 64 << 10
)

// clientHello is what the proxy needs from a TLS ClientHello.
type clientHello struct {
	serverName string // "" when the client sent no server_name extension
	ech        bool   // an encrypted_client_hello extension is present
}

// readClientHello reads TLS records from r until it holds a whole
// ClientHello (which may span records) and returns every byte it read, to
// be forwarded unchanged. Anything that is not a well-formed ClientHello is
// an error: a client that starts a tunnel with a TLS record must let the
// proxy see the server name.
func readClientHello(r io.Reader) (raw []byte, hello clientHello, err error) {
	var msg []byte // the handshake layer, reassembled
	for {
		var hdr [5]byte
		if k, err := io.ReadFull(r, hdr[:]); err != nil {
			return append(raw, hdr[:k]...), hello, fmt.Errorf("read TLS record header: %w", err)
		}
		raw = append(raw, hdr[:]...)
		if hdr[0] != recordTypeHandshake {
			return raw, hello, fmt.Errorf("TLS record of type %d before the ClientHello was complete", hdr[0])
		}
		if hdr[1] != 3 {
			return raw, hello, fmt.Errorf("TLS record version %d.%d", hdr[1], hdr[2])
		}
		n := int(hdr[3])<<8 | int(hdr[4])
		if n == 0 || n > 1<<14 {
			return raw, hello, fmt.Errorf("TLS record length %d", n)
		}
		if len(raw)+n > maxClientHello+5*16 {
			return raw, hello, errors.New("ClientHello larger than 64 KiB")
		}
		start := len(raw)
		raw = append(raw, make([]byte, n)...)
		if k, err := io.ReadFull(r, raw[start:]); err != nil {
			return raw[:start+k], hello, fmt.Errorf("read TLS record: %w", err)
		}
		msg = append(msg, raw[start:]...)
		if len(msg) < 4 {
			continue
		}
		if msg[0] != handshakeClientHello {
			return raw, hello, fmt.Errorf("first TLS handshake message is of type %d, not a ClientHello", msg[0])
		}
		mlen := int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3])
		if mlen > maxClientHello {
			return raw, hello, errors.New("ClientHello larger than 64 KiB")
		}
		if len(msg) >= 4+mlen {
			hello, err = parseClientHello(msg[4 : 4+mlen])
			return raw, hello, err
		}
	}
}

// parseClientHello reads the body of a ClientHello (RFC 8446 section 4.1.2;
// the TLS 1.0-1.2 layout is the same up to the extensions).
func parseClientHello(b []byte) (clientHello, error) {
	var h clientHello
	c := cursor{b: b}
	c.skip(2 + 32)       // legacy_version, random
	c.skip(int(c.u8()))  // legacy_session_id
	c.skip(int(c.u16())) // cipher_suites
	c.skip(int(c.u8()))  // legacy_compression_methods
	if c.bad {
		return h, errors.New("truncated ClientHello")
	}
	if len(c.b) == 0 {
		return h, nil // no extensions (SSL 3.0 style)
	}
	exts := cursor{b: c.bytes(int(c.u16()))}
	if c.bad || len(c.b) != 0 {
		return h, errors.New("malformed ClientHello extensions")
	}
	seen := map[uint16]bool{}
	for len(exts.b) > 0 {
		typ := exts.u16()
		data := cursor{b: exts.bytes(int(exts.u16()))}
		if exts.bad {
			return h, errors.New("malformed ClientHello extension")
		}
		if seen[typ] {
			return h, fmt.Errorf("duplicate ClientHello extension %d", typ)
		}
		seen[typ] = true
		switch typ {
		case extEncryptedClientHello:
			h.ech = true
		case extServerName:
			name, err := parseServerName(data)
			if err != nil {
				return h, err
			}
			h.serverName = name
		}
	}
	return h, nil
}

// parseServerName reads a server_name extension (RFC 6066 section 3),
// which may hold one host_name.
func parseServerName(c cursor) (string, error) {
	list := cursor{b: c.bytes(int(c.u16()))}
	if c.bad || len(c.b) != 0 {
		return "", errors.New("malformed server_name extension")
	}
	var name string
	for len(list.b) > 0 {
		typ := list.u8()
		v := list.bytes(int(list.u16()))
		if list.bad {
			return "", errors.New("malformed server_name extension")
		}
		if typ != 0 {
			continue
		}
		if name != "" || len(v) == 0 {
			return "", errors.New("server_name extension with zero or several host names")
		}
		name = string(v)
	}
	if name == "" {
		return "", errors.New("server_name extension without a host name")
	}
	return name, nil
}

// cursor reads big-endian fields; a read past the end sets bad and yields
// zeros, so a parser checks once after a group of reads.
type cursor struct {
	b   []byte
	bad bool
}

func (c *cursor) bytes(n int) []byte {
	if c.bad || n > len(c.b) {
		c.bad = true
		return nil
	}
	v := c.b[:n]
	c.b = c.b[n:]
	return v
}

func (c *cursor) skip(n int) { c.bytes(n) }

func (c *cursor) u8() uint8 {
	if v := c.bytes(1); v != nil {
		return v[0]
	}
	return 0
}

func (c *cursor) u16() uint16 {
	if v := c.bytes(2); v != nil {
		return uint16(v[0])<<8 | uint16(v[1])
	}
	return 0
}
