package policy

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled the first time it is used.
// Most commands never reach a given expression (awk's, sed's, MongoDB's
// ...), and compiling them all when the package initialised cost every
// forgebox process about 1.5 ms of CPU, `forgebox run` and `forgebox
// version` included (issue 21). The expressions are constants, so a
// mistake in one still fails every test that reaches it.
type lazyRegexp struct{ re func() *regexp.Regexp }

func lazyRE(expr string) *lazyRegexp {
	return &lazyRegexp{re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

func (l *lazyRegexp) MatchString(s string) bool { return l.re().MatchString(s) }

func (l *lazyRegexp) FindStringSubmatch(s string) []string { return l.re().FindStringSubmatch(s) }

func (l *lazyRegexp) FindAllStringSubmatch(s string, n int) [][]string {
	return l.re().FindAllStringSubmatch(s, n)
}

func (l *lazyRegexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.re().FindAllStringSubmatchIndex(s, n)
}
