package netproxy

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"net"
	"strings"
	"testing"
)

// goClientHello returns the first flight of crypto/tls's client for config.
func goClientHello(t testing.TB, config *tls.Config) []byte {
	t.Helper()
	c1, c2 := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		tls.Client(c1, config).Handshake()
	}()
	raw, _, err := readClientHello(c2)
	if err != nil {
		t.Fatalf("readClientHello of crypto/tls's hello: %v", err)
	}
	c2.Close()
	c1.Close()
	<-done
	return raw
}

// helloRecords builds a ClientHello with the given extensions (nil: no
// extensions block at all) and wraps it in TLS records of at most frag bytes.
func helloRecords(exts [][]byte, frag int) []byte {
	var body []byte
	body = append(body, 3, 3)
	body = append(body, make([]byte, 32)...)
	body = append(body, 0)             // session id
	body = append(body, 0, 2, 0x13, 1) // one cipher suite
	body = append(body, 1, 0)          // null compression
	if exts != nil {
		all := bytes.Join(exts, nil)
		body = binary.BigEndian.AppendUint16(body, uint16(len(all)))
		body = append(body, all...)
	}
	msg := append([]byte{handshakeClientHello, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
	var out []byte
	for len(msg) > 0 {
		n := min(frag, len(msg))
		out = append(out, recordTypeHandshake, 3, 1, byte(n>>8), byte(n))
		out = append(out, msg[:n]...)
		msg = msg[n:]
	}
	return out
}

func ext(typ uint16, data []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...)
}

func sniExt(names ...string) []byte {
	var list []byte
	for _, n := range names {
		list = append(list, 0)
		list = binary.BigEndian.AppendUint16(list, uint16(len(n)))
		list = append(list, n...)
	}
	return ext(extServerName, append(binary.BigEndian.AppendUint16(nil, uint16(len(list))), list...))
}

func TestReadClientHello(t *testing.T) {
	goHello := goClientHello(t, &tls.Config{ServerName: "Allowed.Test"})
	goNoSNI := goClientHello(t, &tls.Config{InsecureSkipVerify: true})
	tests := []struct {
		name string
		in   []byte
		sni  string
		ech  bool
		err  string
	}{
		{name: "crypto/tls", in: goHello, sni: "Allowed.Test"},
		{name: "crypto/tls without SNI", in: goNoSNI},
		{name: "one record", in: helloRecords([][]byte{sniExt("a.test")}, 1<<14), sni: "a.test"},
		{name: "one-byte records", in: helloRecords([][]byte{ext(23, nil), sniExt("a.test")}, 1), sni: "a.test"},
		{name: "no extensions", in: helloRecords(nil, 1<<14)},
		{name: "ECH", in: helloRecords([][]byte{sniExt("public.test"), ext(extEncryptedClientHello, []byte{1, 2})}, 100), sni: "public.test", ech: true},
		{name: "two names", in: helloRecords([][]byte{sniExt("a.test", "b.test")}, 1<<14), err: "several host names"},
		{name: "empty name", in: helloRecords([][]byte{sniExt("")}, 1<<14), err: "zero or several"},
		{name: "duplicate extension", in: helloRecords([][]byte{sniExt("a.test"), sniExt("b.test")}, 1<<14), err: "duplicate"},
		{name: "truncated extension", in: helloRecords([][]byte{sniExt("a.test")[:7]}, 1<<14), err: "malformed"},
		{name: "cut short", in: helloRecords([][]byte{sniExt("a.test")}, 1<<14)[:30], err: "read TLS record"},
		{name: "not a ClientHello", in: []byte{22, 3, 1, 0, 4, 2, 0, 0, 0}, err: "not a ClientHello"},
		{name: "alert record", in: append(helloRecords([][]byte{sniExt("a.test")}, 10)[:15], 21, 3, 1, 0, 2, 1, 0), err: "type 21"},
		{name: "zero-length record", in: []byte{22, 3, 1, 0, 0}, err: "length 0"},
		{name: "oversized", in: []byte{22, 3, 1, 0, 4, 1, 0xff, 0xff, 0xff}, err: "larger than 64 KiB"},
		{name: "SSL 2 version", in: []byte{22, 2, 0, 0, 4, 1, 0, 0, 0}, err: "version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, hello, err := readClientHello(bytes.NewReader(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("readClientHello = %+v, %v; want error %q", hello, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("readClientHello: %v", err)
			}
			if hello.serverName != tt.sni || hello.ech != tt.ech {
				t.Errorf("readClientHello = %+v, want server name %q, ech %v", hello, tt.sni, tt.ech)
			}
			if !bytes.Equal(raw, tt.in[:len(raw)]) || len(raw) != len(tt.in) {
				t.Errorf("readClientHello returned %d raw bytes, want all %d read, unchanged", len(raw), len(tt.in))
			}
		})
	}
}

func FuzzReadClientHello(f *testing.F) {
	f.Add(goClientHello(f, &tls.Config{ServerName: "allowed.test"}))
	f.Add(helloRecords([][]byte{sniExt("a.test")}, 7))
	f.Add(helloRecords(nil, 3))
	f.Fuzz(func(t *testing.T, in []byte) {
		raw, _, _ := readClientHello(bytes.NewReader(in))
		if !bytes.Equal(raw, in[:len(raw)]) {
			t.Errorf("raw bytes are not a prefix of the input")
		}
	})
}
