package history

import "strings"

// scanner finds, in one pass, every place a rule's trigger occurs, ASCII
// case folded: an Aho-Corasick automaton over the trigger literals, as a
// dense table over the few byte classes the triggers use. One pass costs
// about a nanosecond a byte however many rules there are, where a
// strings.Index per trigger would read the text ~45 times.
type scanner struct {
	class  [256]int32 // byte -> class; 0: a byte no trigger holds
	nclass int
	// next[state*nclass+class] is the next state, times nclass so that
	// the loop needs no multiplication, and complemented (negative) when
	// a trigger ends there.
	next []int32
	out  []uint64 // rules (bit i: rule i) whose trigger ends at state
}

// newScanner builds the automaton; triggers[i] fire rule bit i.
func newScanner(triggers [][]string) *scanner {
	sc := &scanner{nclass: 1}
	for _, ts := range triggers {
		for _, t := range ts {
			for i := 0; i < len(t); i++ {
				if c := t[i]; sc.class[c] == 0 {
					sc.class[c] = int32(sc.nclass)
					sc.nclass++
				}
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		sc.class[c] = sc.class[c+'a'-'A']
	}
	// Trie: goto edges, -1 where absent.
	size := 1
	for _, ts := range triggers {
		for _, t := range ts {
			size += len(t)
		}
	}
	sc.next = make([]int32, 0, size*sc.nclass)
	sc.out = make([]uint64, 0, size)
	absent := make([]int32, sc.nclass)
	for i := range absent {
		absent[i] = -1
	}
	newState := func() int32 {
		sc.next = append(sc.next, absent...)
		sc.out = append(sc.out, 0)
		return int32(len(sc.out) - 1)
	}
	newState()
	for rule, ts := range triggers {
		for _, t := range ts {
			s := int32(0)
			for i := 0; i < len(t); i++ {
				e := int(s)*sc.nclass + int(sc.class[t[i]])
				if sc.next[e] < 0 {
					n := newState()
					sc.next[e] = n
				}
				s = sc.next[e]
			}
			sc.out[s] |= 1 << rule
		}
	}
	// Breadth first: fill missing edges from the failure state, whose
	// edges are already complete, and inherit its outputs.
	fail := make([]int32, len(sc.out))
	queue := make([]int32, 0, len(sc.out))
	for c := range sc.nclass {
		if n := sc.next[c]; n < 0 {
			sc.next[c] = 0
		} else {
			queue = append(queue, n) // fail[n] = 0
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		sc.out[s] |= sc.out[fail[s]]
		for c := range sc.nclass {
			e := int(s)*sc.nclass + c
			if n := sc.next[e]; n < 0 {
				sc.next[e] = sc.next[int(fail[s])*sc.nclass+c]
			} else {
				fail[n] = sc.next[int(fail[s])*sc.nclass+c]
				queue = append(queue, n)
			}
		}
	}
	for e, n := range sc.next {
		sc.next[e] = n * int32(sc.nclass)
		if sc.out[n] != 0 {
			sc.next[e] = ^sc.next[e]
		}
	}
	return sc
}

// hit is a line of the text holding a trigger of each rule in rules.
type hit struct {
	start, end int // the line, without its '\n'
	rules      uint64
}

// lines returns the lines of s that hold triggers, in order, with the
// rules they fire.
func (sc *scanner) lines(s string) []hit {
	var hits []hit
	next, class := sc.next, &sc.class
	st := int32(0)
	for i := 0; i < len(s); i++ {
		st = next[st+class[s[i]]]
		if st >= 0 {
			continue
		}
		st = ^st
		o := sc.out[int(st)/sc.nclass]
		if n := len(hits); n > 0 && i < hits[n-1].end {
			hits[n-1].rules |= o
			continue
		}
		start, end := strings.LastIndexByte(s[:i], '\n')+1, len(s)
		if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
			end = i + k
		}
		hits = append(hits, hit{start, end, o})
	}
	return hits
}
