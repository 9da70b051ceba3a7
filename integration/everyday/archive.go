package everyday

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// epoch is the time stamped into archives, so that they are the same bytes
// on every run.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// zipFiles is a zip archive of files, by name.
func zipFiles(files map[string]string) ([]byte, error) {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, name := range sortedKeys(files) {
		f, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: epoch})
		if err != nil {
			return nil, err
		}
		if _, err := f.Write([]byte(files[name])); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// tarGz is a gzipped tar archive of files, by name, as npm pack makes.
func tarGz(files map[string]string) ([]byte, error) {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	w := tar.NewWriter(z)
	for _, name := range sortedKeys(files) {
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), ModTime: epoch, Typeflag: tar.TypeReg}
		if err := w.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(files[name])); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// pyWheel is a pure-Python wheel (PEP 427) of files, with the metadata
// and RECORD pip checks.
func pyWheel(name, version string, files map[string]string) ([]byte, error) {
	info := fmt.Sprintf("%s-%s.dist-info/", name, version)
	all := map[string]string{
		info + "METADATA": fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version),
		info + "WHEEL":    "Wheel-Version: 1.0\nGenerator: forgebox-everyday\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
	}
	for k, v := range files {
		all[k] = v
	}
	var record strings.Builder
	for _, k := range sortedKeys(all) {
		sum := sha256.Sum256([]byte(all[k]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", k, base64.RawURLEncoding.EncodeToString(sum[:]), len(all[k]))
	}
	record.WriteString(info + "RECORD,,\n")
	all[info+"RECORD"] = record.String()
	return zipFiles(all)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// cargoChecksum is the .cargo-checksum.json of a vendored crate: cargo
// checks each file against it. A directory source has no .crate archive,
// so the package checksum, which goes into Cargo.lock, is one of the
// files' checksums in order.
func cargoChecksum(files map[string]string) []byte {
	sums := map[string]string{}
	var all strings.Builder
	for _, k := range sortedKeys(files) {
		sums[k] = sha256Hex([]byte(files[k]))
		all.WriteString(sums[k])
	}
	b, _ := json.Marshal(struct {
		Files   map[string]string `json:"files"`
		Package string            `json:"package"`
	}{sums, sha256Hex([]byte(all.String()))})
	return b
}
