package cgroup

import (
	"errors"
	"strings"
	"testing"
)

func TestGroupNameRoundTrip(t *testing.T) {
	for _, c := range []struct {
		o  owner
		id string
	}{
		{owner{PID: 4242, Start: 123456, PidNS: 4026531836}, "run-7"},
		{owner{PID: 1, Start: 0, PidNS: 1}, "a.b_c-d-e"},
	} {
		name := groupName(c.o, c.id)
		o, id, ok := parseGroupName(name)
		if !ok || o != c.o || id != c.id {
			t.Errorf("parseGroupName(%q) = %+v, %q, %v; want %+v, %q, true", name, o, id, ok, c.o, c.id)
		}
	}
}

func TestParseGroupNameRejects(t *testing.T) {
	for _, name := range []string{
		"", "forgebox", "forgebox-", "forgebox-1-2-3", "forgebox-1-2-3-", "forgebox-x-2-3-id",
		"forgebox-0-2-3-id", "forgebox--1-2-3-id", "forgebox-1-2-3-a/b", "other-1-2-3-id", "system.slice",
	} {
		if o, id, ok := parseGroupName(name); ok {
			t.Errorf("parseGroupName(%q) = %+v, %q, true; want false", name, o, id)
		}
	}
}

func TestCheckID(t *testing.T) {
	for _, id := range []string{"", "a/b", "a b", "ä", strings.Repeat("x", maxIDLen+1), "a\n"} {
		if err := checkID(id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("checkID(%q) = %v, want ErrInvalidID", id, err)
		}
	}
	// ".." is harmless: the id only ever ends a name that starts "forgebox-"
	for _, id := range []string{"1", "run-7", "a.b_c", "..", strings.Repeat("x", maxIDLen)} {
		if err := checkID(id); err != nil {
			t.Errorf("checkID(%q) = %v, want nil", id, err)
		}
	}
}

func TestParseStartTime(t *testing.T) {
	for _, c := range []struct {
		stat string
		want uint64
		ok   bool
	}{
		{"1 (systemd) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 17 100 200", 17, true},
		{"77 (a) b) (c) R 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 987654 1 2", 987654, true},
		{"77 (sh) R 1 2", 0, false},
		{"no parenthesis", 0, false},
	} {
		got, err := parseStartTime(c.stat)
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("parseStartTime(%q) = %d, %v; want %d, ok %v", c.stat, got, err, c.want, c.ok)
		}
	}
}

func TestKernelAtLeast(t *testing.T) {
	for _, c := range []struct {
		release string
		want    bool
	}{
		{"6.18.44-fc-v595", true}, {"5.14.0-284.el9.x86_64", true}, {"5.13.19", false},
		{"4.19.0", false}, {"5.15", true}, {"garbage", false}, {"", false},
	} {
		if got := kernelAtLeast(c.release, 5, 14); got != c.want {
			t.Errorf("kernelAtLeast(%q, 5, 14) = %v, want %v", c.release, got, c.want)
		}
	}
}
