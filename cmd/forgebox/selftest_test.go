package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/forgebox/forgebox/selftest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// What selftest prints, for a person and with --json, is golden: people
// and agents read it. The report is the selftest package's golden one,
// which has every kind of verdict once.
func TestSelftestOutputGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("..", "..", "selftest", "testdata", "report.json.golden"))
	if err != nil {
		t.Fatal(err)
	}
	r := new(selftest.Report)
	if err := json.Unmarshal(in, r); err != nil {
		t.Fatalf("the selftest package's golden report: %v", err)
	}
	r.Duration = 412500 * time.Microsecond
	var text, js bytes.Buffer
	writeSelftest(&text, r)
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(selftestJSON{Report: r, DurationMS: ms(r.Duration)}); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{"report.golden": text.Bytes(), "report.json.golden": js.Bytes()} {
		path := filepath.Join("testdata", "selftest", name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs (go test -update rewrites it):\n%s", path, got)
		}
	}
}
