package integration

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// usageVerbs are the verbs, and the sub-verbs they list, that forgebox
// help shows ("run", "policy list", "history show" ...): what a person
// asks --help of.
func usageVerbs(t *testing.T) [][]string {
	t.Helper()
	out, err := exec.Command(forgebox, "help").Output()
	if err != nil {
		t.Fatalf("forgebox help: %v", err)
	}
	word := regexp.MustCompile(`^[a-z]+(\|[a-z]+)*$`)
	seen := map[string]bool{}
	var verbs [][]string
	add := func(v ...string) {
		if k := strings.Join(v, " "); !seen[k] {
			seen[k] = true
			verbs = append(verbs, v)
		}
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if !strings.HasPrefix(l, "  forgebox ") || len(f) < 2 {
			continue
		}
		add(f[1])
		if len(f) > 2 && word.MatchString(f[2]) {
			for _, sub := range strings.Split(f[2], "|") {
				add(f[1], sub)
			}
		}
	}
	if len(verbs) < 10 {
		t.Fatalf("forgebox help lists %d verbs: %v; want them all\n%s", len(verbs), verbs, out)
	}
	return verbs
}

// Every verb's --help and -h print its usage and exit 0, without a panic
// (serve --help printed 16 panics of the flag package's zero-value probe,
// doctor and the cache verbs refused "flag: help requested" with 125).
func TestEveryVerbHelps(t *testing.T) {
	for _, v := range usageVerbs(t) {
		for _, h := range []string{"--help", "-h"} {
			args := append(append([]string{}, v...), h)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				cmd := exec.Command(forgebox, args...)
				cmd.Dir = t.TempDir()
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("forgebox %s: %v; want exit 0\n%s", strings.Join(args, " "), err, out)
				}
				if strings.Contains(string(out), "panic") {
					t.Errorf("forgebox %s printed a panic:\n%s", strings.Join(args, " "), out)
				}
				if v[0] != "version" && !strings.Contains(string(out), "Usage") {
					t.Errorf("forgebox %s printed no usage:\n%s", strings.Join(args, " "), out)
				}
			})
		}
	}
}
