package agent

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// pending remembers the approvals the server asked a client for, by the
// nonce it sent as the request state, until the answer comes back.
type pending struct {
	mu    sync.Mutex
	asked map[string]question
}

type question struct {
	key     string   // the command asked about (Target.key)
	answers []string // the answers offered
	at      time.Time
}

// pendingLife bounds how long a question waits for its answer.
const pendingLife = 30 * time.Minute

// add records a question and returns its nonce.
func (p *pending) add(key string, answers []string) string {
	b := make([]byte, 16)
	rand.Read(b)
	nonce := hex.EncodeToString(b)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.asked == nil {
		p.asked = map[string]question{}
	}
	now := time.Now()
	for n, q := range p.asked {
		if now.Sub(q.at) > pendingLife {
			delete(p.asked, n)
		}
	}
	p.asked[nonce] = question{key: key, answers: answers, at: now}
	return nonce
}

// take returns the answers offered by the question with this nonce about
// this command, and forgets it: an answer counts once.
func (p *pending) take(nonce, key string) ([]string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	q, ok := p.asked[nonce]
	if !ok || q.key != key || time.Since(q.at) > pendingLife {
		return nil, false
	}
	delete(p.asked, nonce)
	return q.answers, true
}
