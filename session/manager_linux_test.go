package session

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestManagerLimit(t *testing.T) {
	checkNoGoroutineLeak(t)
	m := NewManager(2, time.Hour)
	defer m.CloseAll()
	var ids []string
	for range 2 {
		s, err := m.Start(context.Background(), testOptions(t))
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		ids = append(ids, s.ID)
	}
	_, err := m.Start(context.Background(), testOptions(t))
	if !errors.Is(err, ErrTooManySessions) || !strings.Contains(err.Error(), "2 of 2") {
		t.Fatalf("third Start: err = %v, want ErrTooManySessions naming the limit", err)
	}
	if err := m.Close(ids[0]); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := m.Get(ids[0]); !errors.Is(err, ErrNoSuchSession) {
		t.Errorf("Get(closed id): err = %v, want ErrNoSuchSession", err)
	}
	if _, err := m.Start(context.Background(), testOptions(t)); err != nil {
		t.Errorf("Start after Close: %v", err)
	}
	if got := len(m.List()); got != 2 {
		t.Errorf("List() has %d sessions, want 2", got)
	}
}

func TestManagerGet(t *testing.T) {
	m := NewManager(0, 0)
	defer m.CloseAll()
	if _, err := m.Get("nope"); !errors.Is(err, ErrNoSuchSession) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Get(nope): err = %v, want ErrNoSuchSession naming the id", err)
	}
	s, err := m.Start(context.Background(), testOptions(t))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if len(s.ID) != 12 {
		t.Errorf("ID %q, want 12 hex digits", s.ID)
	}
	got, err := m.Get(s.ID)
	if err != nil || got != s {
		t.Errorf("Get(%s) = %v, %v", s.ID, got, err)
	}
	if err := m.Close("nope"); !errors.Is(err, ErrNoSuchSession) {
		t.Errorf("Close(nope): err = %v, want ErrNoSuchSession", err)
	}
}

func TestManagerExitedSession(t *testing.T) {
	m := NewManager(0, 0)
	defer m.CloseAll()
	s, err := m.Start(context.Background(), testOptions(t))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s.Send("exit 7{Enter}")
	for deadline := time.Now().Add(5 * time.Second); s.Alive() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	list := m.List()
	if len(list) != 1 || !list[0].Exited || list[0].ExitCode != 7 || list[0].ID != s.ID {
		t.Fatalf("List() after exit 7 = %+v, want the session, exited with 7", list)
	}
	if list := m.List(); len(list) != 0 {
		t.Errorf("second List() = %+v, want the exited session removed", list)
	}

	s2, err := m.Start(context.Background(), testOptions(t))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s2.Exec(context.Background(), "exit 4", time.Second)
	if _, err := m.Get(s2.ID); !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "status 4") {
		t.Errorf("Get(exited) err = %v, want ErrExited with status 4", err)
	}
	if _, err := m.Get(s2.ID); !errors.Is(err, ErrNoSuchSession) {
		t.Errorf("second Get(exited) err = %v, want ErrNoSuchSession", err)
	}
}

func TestManagerIdleReaper(t *testing.T) {
	checkNoGoroutineLeak(t)
	m := NewManager(0, 200*time.Millisecond)
	defer m.CloseAll()
	idle, err := m.Start(context.Background(), testOptions(t))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	busy, err := m.Start(context.Background(), testOptions(t))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	// A command longer than the idle period keeps its session.
	if _, err := busy.Exec(context.Background(), "sleep 0.6", 5*time.Second); err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if idle.Alive() {
		t.Errorf("idle session still alive after 600 ms")
	}
	if !busy.Alive() {
		t.Errorf("session busy with a command was reaped")
	}
	if _, err := m.Get(idle.ID); !errors.Is(err, ErrNoSuchSession) {
		t.Errorf("Get(reaped): err = %v, want ErrNoSuchSession", err)
	}
}

func TestManagerCloseAll(t *testing.T) {
	checkNoGoroutineLeak(t)
	m := NewManager(0, time.Hour)
	defer m.CloseAll()
	var pids []int
	var sessions []*Session
	for range 2 {
		s, err := m.Start(context.Background(), testOptions(t))
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		out := strings.Fields(mustExec(t, s, "sleep 1000 & echo $!").Output)
		pid, err := strconv.Atoi(out[len(out)-1])
		if err != nil {
			t.Fatalf("background pid: %v", err)
		}
		pids = append(pids, pid, s.proc.pid)
		sessions = append(sessions, s)
	}
	m.CloseAll()
	m.CloseAll()
	for _, s := range sessions {
		if s.Alive() {
			t.Errorf("session %s alive after CloseAll", s.ID)
		}
	}
	for _, pid := range pids {
		waitGone(t, pid)
	}
	if _, err := m.Start(context.Background(), testOptions(t)); !errors.Is(err, ErrManagerClosed) {
		t.Errorf("Start after CloseAll: err = %v, want ErrManagerClosed", err)
	}
	if len(m.List()) != 0 {
		t.Errorf("List() after CloseAll is not empty")
	}
}
