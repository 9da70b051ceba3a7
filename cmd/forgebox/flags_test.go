package main

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/forgebox/forgebox/sandbox"
)

func TestParseSize(t *testing.T) {
	good := map[string]int64{"0": 0, "65536": 65536, "512k": 512 << 10, "1MiB": 1 << 20, "2M": 2 << 20, "1g": 1 << 30, "10kb": 10 << 10, " 3 B ": 3}
	for in, want := range good {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "-1", "1.5M", "1T", "99999999999999999999", "4611686018427387904k"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = nil error; want a refusal", in)
		}
	}
}

func TestDurationFlag(t *testing.T) {
	good := map[string]time.Duration{"30": 30 * time.Second, "1.5": 1500 * time.Millisecond, "2m": 2 * time.Minute, "100ms": 100 * time.Millisecond}
	for in, want := range good {
		var d durationFlag
		if err := d.Set(in); err != nil || d.d != want {
			t.Errorf("durationFlag.Set(%q) = %v, %v; want %v", in, d.d, err, want)
		}
	}
	for _, in := range []string{"", "x", "-1s", "-5", "1e30"} {
		var d durationFlag
		if err := d.Set(in); err == nil {
			t.Errorf("durationFlag.Set(%q) = nil error; want a refusal", in)
		}
	}
}

// Each cause maps to the documented exit code and a stable error code.
func TestExplain(t *testing.T) {
	tests := []struct {
		err  error
		code string
		exit int
	}{
		{&sandbox.ExecError{Program: "x", Errno: syscall.ENOENT}, "not_found", 127},
		{&sandbox.ExecError{Program: "x", Errno: syscall.EACCES}, "not_executable", 126},
		{&sandbox.SetupError{Step: "mounts", Errno: syscall.EPERM, Message: "m"}, "setup_failed", 125},
		{&sandbox.UnavailableError{Layer: "namespaces", Reason: "r"}, "unavailable", 125},
		{sandbox.Invalidf("bad"), "invalid", 125},
		{errors.New("boom"), "internal", 125},
	}
	for _, tt := range tests {
		info, exit := explain(tt.err)
		if info.Code != tt.code || exit != tt.exit || info.Message == "" {
			t.Errorf("explain(%v) = %+v, %d; want code %s, exit %d", tt.err, info, exit, tt.code, tt.exit)
		}
	}
}
