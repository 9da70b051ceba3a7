package everyday

import (
	"fmt"
	"os"
	"path/filepath"
)

// Project is one tiny project and how to build and test it offline.
type Project struct {
	// Name is the language: go, python, node or rust.
	Name string
	// Tools are the programs Command runs, looked up on PATH.
	Tools []string
	// Command is a shell line, run in the project's directory, that
	// builds the project and runs its tests.
	Command string
	// Want is a line Command prints (on stdout or stderr) when the tests
	// ran and passed.
	Want string
	// Outputs are what Command creates in the project's directory (build
	// output, installed dependencies): removing them starts the next run
	// from the sources again.
	Outputs []string
	files   func() (map[string][]byte, error)
}

// SystemPath is the system's program directories, where Debian's packages
// (scripts/setup) put python3, node, npm and cargo: the projects run with
// it, after the directory of the go in use. Toolchains in a home
// directory (rustup, pyenv, nvm) are left out, since another user could
// not run them.
const SystemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Projects are the four projects, in a fixed order.
func Projects() []Project {
	return []Project{goProject(), pythonProject(), nodeProject(), rustProject()}
}

// Write writes the project and its stand-in registry into dir, which must
// exist.
func (p Project) Write(dir string) error {
	files, err := p.files()
	if err != nil {
		return fmt.Errorf("%s project: %w", p.Name, err)
	}
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Clean removes Outputs from dir.
func (p Project) Clean(dir string) error {
	for _, o := range p.Outputs {
		if err := os.RemoveAll(filepath.Join(dir, o)); err != nil {
			return err
		}
	}
	return nil
}

// goProject is a module using example.com/greet, served by a file-system
// module proxy (GOPROXY=file://...), with no checksum database to ask;
// its test serves HTTP with httptest on 127.0.0.1.
func goProject() Project {
	return Project{
		Name:  "go",
		Tools: []string{"go"},
		Command: `export GOPROXY="file://$PWD/deps/goproxy" GOSUMDB=off GOFLAGS=-mod=mod GOTOOLCHAIN=local && ` +
			`go build ./... && go test -count=1 ./...`,
		Want:    "ok  \texample.com/app",
		Outputs: []string{"go.sum"},
		files: func() (map[string][]byte, error) {
			zip, err := zipFiles(map[string]string{
				"example.com/greet@v1.0.0/go.mod":   goGreetMod,
				"example.com/greet@v1.0.0/greet.go": goGreet,
			})
			if err != nil {
				return nil, err
			}
			const v = "deps/goproxy/example.com/greet/@v/"
			return map[string][]byte{
				v + "list":        []byte("v1.0.0\n"),
				v + "v1.0.0.info": []byte(`{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}` + "\n"),
				v + "v1.0.0.mod":  []byte(goGreetMod),
				v + "v1.0.0.zip":  zip,
				"go.mod":          []byte("module example.com/app\n\ngo 1.21\n\nrequire example.com/greet v1.0.0\n"),
				"app.go":          []byte(goApp),
				"app_test.go":     []byte(goAppTest),
			}, nil
		},
	}
}

const goGreetMod = "module example.com/greet\n\ngo 1.21\n"

const goGreet = `// Package greet greets.
package greet

// Hello greets name.
func Hello(name string) string { return "hello, " + name }
`

const goApp = `// Package app answers HTTP requests with a greeting.
package app

import (
	"io"
	"net/http"

	"example.com/greet"
)

// Handler greets the name in the query.
func Handler(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, greet.Hello(r.URL.Query().Get("name")))
}
`

const goAppTest = `package app

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(Handler))
	defer s.Close()
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("server at %s, want 127.0.0.1", s.URL)
	}
	r, err := http.Get(s.URL + "?name=sandbox")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if string(b) != "hello, sandbox" {
		t.Fatalf("got %q", b)
	}
}
`

// pythonProject installs greet with pip into a virtual environment in the
// project, from a PEP 503 index directory (--index-url file://...); its
// test serves HTTP with http.server on 127.0.0.1.
func pythonProject() Project {
	return Project{
		Name:  "python",
		Tools: []string{"python3"},
		Command: `python3 -m venv .venv && ` +
			`.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input --index-url "file://$PWD/deps/simple" greet==1.0.0 && ` +
			`.venv/bin/python -m unittest -v`,
		Want:    "OK",
		Outputs: []string{".venv"},
		files: func() (map[string][]byte, error) {
			const whl = "greet-1.0.0-py3-none-any.whl"
			wheel, err := pyWheel("greet", "1.0.0", map[string]string{"greet/__init__.py": pyGreet})
			if err != nil {
				return nil, err
			}
			return map[string][]byte{
				"deps/simple/index.html":       []byte(`<!DOCTYPE html><html><body><a href="greet/">greet</a></body></html>` + "\n"),
				"deps/simple/greet/index.html": []byte(`<!DOCTYPE html><html><body><a href="` + whl + `#sha256=` + sha256Hex(wheel) + `">` + whl + "</a></body></html>\n"),
				"deps/simple/greet/" + whl:     wheel,
				"app.py":                       []byte(pyApp),
				"test_app.py":                  []byte(pyAppTest),
			}, nil
		},
	}
}

const pyGreet = `def hello(name):
    return "hello, " + name
`

const pyApp = `import http.server
import urllib.parse

import greet


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        name = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query).get("name", [""])[0]
        body = greet.hello(name).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass
`

const pyAppTest = `import http.server
import threading
import unittest
import urllib.request

import app


class TestHandler(unittest.TestCase):
    def test_greets(self):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), app.Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            url = "http://127.0.0.1:%d/?name=sandbox" % server.server_address[1]
            with opener.open(url, timeout=10) as r:
                self.assertEqual(r.read(), b"hello, sandbox")
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    unittest.main()
`

// nodeProject depends on greet as a tarball beside it (file:deps/...),
// installed by npm without the registry (--offline); node --test runs a
// test that serves HTTP on 127.0.0.1.
func nodeProject() Project {
	return Project{
		Name:    "node",
		Tools:   []string{"node", "npm"},
		Command: `npm install --offline --no-audit --no-fund --no-update-notifier --loglevel=error && node --test`,
		Want:    "# pass 1",
		Outputs: []string{"node_modules", "package-lock.json"},
		files: func() (map[string][]byte, error) {
			tgz, err := tarGz(map[string]string{
				"package/package.json": `{"name": "greet", "version": "1.0.0", "main": "index.js"}` + "\n",
				"package/index.js":     "exports.hello = (name) => 'hello, ' + name;\n",
			})
			if err != nil {
				return nil, err
			}
			return map[string][]byte{
				"deps/greet-1.0.0.tgz": tgz,
				"package.json":         []byte(nodePackage),
				"app.js":               []byte(nodeApp),
				"test/server.test.js":  []byte(nodeAppTest),
			}, nil
		},
	}
}

const nodePackage = `{
  "name": "app",
  "version": "1.0.0",
  "private": true,
  "dependencies": {"greet": "file:deps/greet-1.0.0.tgz"},
  "scripts": {"test": "node --test"}
}
`

const nodeApp = `const greet = require('greet');

exports.handler = (req, res) => {
  const name = new URL(req.url, 'http://localhost').searchParams.get('name') || '';
  res.end(greet.hello(name));
};
`

const nodeAppTest = `const assert = require('node:assert');
const http = require('node:http');
const test = require('node:test');
const app = require('../app.js');

test('greets over HTTP on 127.0.0.1', async () => {
  const server = http.createServer(app.handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const body = await new Promise((resolve, reject) => {
      http.get({host: '127.0.0.1', port: server.address().port, path: '/?name=sandbox'}, (res) => {
        let b = '';
        res.on('data', (c) => { b += c; });
        res.on('end', () => resolve(b));
      }).on('error', reject);
    });
    assert.strictEqual(body, 'hello, sandbox');
  } finally {
    server.close();
  }
});
`

// rustProject depends on greet from crates.io, replaced by a vendored
// directory source (.cargo/config.toml), built and tested with
// --offline; its test serves TCP on 127.0.0.1.
func rustProject() Project {
	return Project{
		Name:    "rust",
		Tools:   []string{"cargo"},
		Command: `cargo build --offline --quiet && cargo test --offline`,
		Want:    "test result: ok. 1 passed",
		Outputs: []string{"target", "Cargo.lock"},
		files: func() (map[string][]byte, error) {
			greet := map[string]string{
				"Cargo.toml": "[package]\nname = \"greet\"\nversion = \"1.0.0\"\nedition = \"2021\"\n",
				"src/lib.rs": "pub fn hello(name: &str) -> String {\n    format!(\"hello, {}\", name)\n}\n",
			}
			files := map[string][]byte{
				".cargo/config.toml":                []byte("[source.crates-io]\nreplace-with = \"vendored-sources\"\n\n[source.vendored-sources]\ndirectory = \"vendor\"\n"),
				"Cargo.toml":                        []byte("[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ngreet = \"1.0\"\n"),
				"src/lib.rs":                        []byte(rustApp),
				"vendor/greet/.cargo-checksum.json": cargoChecksum(greet),
			}
			for name, content := range greet {
				files["vendor/greet/"+name] = []byte(content)
			}
			return files, nil
		},
	}
}

const rustApp = `use std::io::{Read, Write};

/// Answers one connection with a greeting for the name it sent.
pub fn serve_one(listener: &std::net::TcpListener) -> std::io::Result<()> {
    let (mut conn, _) = listener.accept()?;
    let mut name = String::new();
    conn.read_to_string(&mut name)?;
    conn.write_all(greet::hello(&name).as_bytes())
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpListener, TcpStream};

    #[test]
    fn greets_over_tcp_on_loopback() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || super::serve_one(&listener).unwrap());
        let mut conn = TcpStream::connect(addr).unwrap();
        conn.write_all(b"sandbox").unwrap();
        conn.shutdown(Shutdown::Write).unwrap();
        let mut got = String::new();
        conn.read_to_string(&mut got).unwrap();
        server.join().unwrap();
        assert_eq!(got, "hello, sandbox");
    }
}
`
