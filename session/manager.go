package session

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// Manager owns the sessions of one server: it caps their number, finds them
// by id, and closes those left idle.
type Manager struct {
	max  int
	idle time.Duration

	mu       sync.Mutex
	sessions map[string]*Session
	starting int // slots reserved by Starts in progress
	closed   bool

	stop       chan struct{}
	reaperDone chan struct{}
}

// NewManager allows at most max live sessions (no limit when max <= 0) and
// closes a session after idle without use (never when idle <= 0). CloseAll
// must be called to stop the idle reaper.
func NewManager(max int, idle time.Duration) *Manager {
	m := &Manager{
		max: max, idle: idle,
		sessions:   map[string]*Session{},
		stop:       make(chan struct{}),
		reaperDone: make(chan struct{}),
	}
	if idle > 0 {
		go m.reap()
	} else {
		close(m.reaperDone)
	}
	return m
}

// Start starts a session unless the limit is reached.
func (m *Manager) Start(ctx context.Context, o Options) (*Session, error) {
	if err := m.reserve(); err != nil {
		return nil, err
	}
	s, err := Start(ctx, o)
	m.mu.Lock()
	m.starting--
	closed := m.closed
	if err == nil && !closed {
		m.sessions[s.ID] = s
	}
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if closed {
		// CloseAll ran while the shell started.
		s.Close()
		return nil, ErrManagerClosed
	}
	return s, nil
}

// reserve takes a slot before the slow start, so concurrent Starts cannot
// overshoot the limit. Exited sessions do not count.
func (m *Manager) reserve() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrManagerClosed
	}
	live := m.starting
	for _, s := range m.sessions {
		if s.Alive() {
			live++
		}
	}
	if m.max > 0 && live >= m.max {
		return fmt.Errorf("%w: %d of %d in use; close one first", ErrTooManySessions, live, m.max)
	}
	m.starting++
	return nil
}

// Get returns the session with this id. A session whose shell exited is
// removed, and the error says how it ended.
func (m *Manager) Get(id string) (*Session, error) {
	m.mu.Lock()
	s, ok := m.sessions[id]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("session %q: %w", id, ErrNoSuchSession)
	}
	if err := s.usable(); err != nil {
		m.remove(s)
		return nil, fmt.Errorf("session %q: %w", id, err)
	}
	return s, nil
}

// List describes every session, oldest first. Sessions whose shell exited
// are listed once more, with their exit status, and then removed.
func (m *Manager) List() []Info {
	m.mu.Lock()
	all := slices.Collect(maps.Values(m.sessions))
	m.mu.Unlock()
	infos := make([]Info, 0, len(all))
	for _, s := range all {
		info := s.Info()
		infos = append(infos, info)
		if info.Exited {
			m.remove(s)
		}
	}
	slices.SortFunc(infos, func(a, b Info) int { return a.Created.Compare(b.Created) })
	return infos
}

// Close closes the session with this id and forgets it.
func (m *Manager) Close(id string) error {
	m.mu.Lock()
	s, ok := m.sessions[id]
	delete(m.sessions, id)
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("session %q: %w", id, ErrNoSuchSession)
	}
	return s.Close()
}

// CloseAll closes every session and stops the idle reaper; the Manager
// starts no sessions afterwards. Safe to call more than once.
func (m *Manager) CloseAll() {
	m.mu.Lock()
	all := slices.Collect(maps.Values(m.sessions))
	clear(m.sessions)
	if !m.closed {
		m.closed = true
		close(m.stop)
	}
	m.mu.Unlock()
	closeConcurrently(all)
	<-m.reaperDone
}

func (m *Manager) remove(s *Session) {
	m.mu.Lock()
	if m.sessions[s.ID] == s {
		delete(m.sessions, s.ID)
	}
	m.mu.Unlock()
	s.Close()
}

// reap closes sessions left unused for the idle period. A session running
// an Exec is in use however long the command takes.
func (m *Manager) reap() {
	defer close(m.reaperDone)
	tick := time.NewTicker(max(m.idle/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-tick.C:
			closeConcurrently(m.takeIdle(time.Now()))
		}
	}
}

func (m *Manager) takeIdle(now time.Time) []*Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	var idle []*Session
	for id, s := range m.sessions {
		if s.inExec.Load() == 0 && now.Sub(s.LastUsed()) >= m.idle {
			idle = append(idle, s)
			delete(m.sessions, id)
		}
	}
	return idle
}

// closeConcurrently closes sessions in parallel: each may spend a grace
// period waiting for its processes to die.
func closeConcurrently(sessions []*Session) {
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() { s.Close() })
	}
	wg.Wait()
}
