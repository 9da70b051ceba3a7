package policy

import "testing"

// A line is cache-free only when every command is a reader forgebox knows,
// run as written on the workspace: anything that may run other code, read
// a variable or reach a path outside the workspace keeps the caches.
func TestCacheFree(t *testing.T) {
	e := New(mustPolicy(t, `{}`))
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"ls", true},
		{"ls; cat f | grep x", true},
		{"ls -la src && wc -l *.go", true},
		{"grep -rn foo . 2>&1 | head -5", true},
		{"cat README.md > /dev/null", true},
		{"sort -u a.txt | uniq -c > counts.txt", true},
		{"diff -u a b || true", true},
		{"echo hi", true},
		{"/bin/true", true},
		{"tail -n 20 log.txt", true},

		{"", false},
		{"go env GOCACHE", false},
		{"go build ./...", false},
		{"npm ls", false},
		{"pip list", false},
		{"make", false},
		{"sh -c ls", false},
		{"bash -c 'cat f'", false},
		{"./script", false},
		{"./ls", false},
		{"bash script.sh", false},
		{"python3 -c 'print(1)'", false},
		{"eval ls", false},
		{"xargs cat < list", false},
		{"find . -name x", false},
		{"env ls", false},
		{"env GOCACHE=/x ls", false},
		{"exec ls", false},
		{"nice ls", false},
		{"time ls", true}, // the shell's keyword: it runs ls and times it
		{"FOO=1 ls", false},
		{"ls() { npm i; }; ls", false},
		{"cd sub && ls", false},
		{"cd .. && ls", false},
		{"ls ~/.cache", false},
		{"ls ~", false},
		{"cat /etc/hosts", false},
		{"ls /root/*", false},
		{"ls ..", false},
		{"ls ../..", false},
		{"echo $HOME", false},
		{"echo $GOCACHE", false},
		{"cat $(ls)", false},
		{"printenv GOCACHE", false},
		{"bat f", false},
		{"tldr ls", false},
		{"df -h", false},
		{"sort -o /home/u/.cache/x f", false},
		{"cat f > ~/.cache/x", false},
		{"cat < /home/u/.npm/x", false},
		{"tail -f log", false},
		{"grep --file=/home/u/.cache/p x", false},
		{"grep -f/home/u/.cache/p x", false},
		{"rm -rf build", false},
		{"touch f", false},
		{"unknownprog", false},
		{"/home/u/bin/cat f", false},
		{"[[ -f ~/.cache/x ]] && echo y", false},
		{"(( x = 1 )); echo y", false},
		{"for f in ~/.cache/*; do echo x; done", false},
		{"case x in x) ls;; esac", false},
		{"coproc ls", false},
		{"if true; then ls; fi", true},
		{"ls 2>/dev/null || cat f", true},
		{"(cd sub; ls)", false},
		{"{ ls; cat f; } | wc -l", true},
	} {
		if got := e.DecideLine(testCtx, tc.line).CacheFree(); got != tc.want {
			t.Errorf("DecideLine(%q).CacheFree() = %v, want %v\n%+v", tc.line, got, tc.want, e.DecideLine(testCtx, tc.line).Commands)
		}
	}
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"/bin/true"}, true},
		{[]string{"ls", "-l"}, true},
		{[]string{"cat", "a; b"}, true},
		{[]string{"sh", "-c", "ls"}, false},
		{[]string{"go", "version"}, false},
		{[]string{"ls", "/home/u/go/pkg/mod"}, false},
		{[]string{"./true"}, false},
	} {
		if got := e.DecideArgv(testCtx, tc.argv).CacheFree(); got != tc.want {
			t.Errorf("DecideArgv(%q).CacheFree() = %v, want %v", tc.argv, got, tc.want)
		}
	}
	// A workspace that is the home holds the caches: nothing in it is
	// cache-free.
	home := &Context{Workspace: "/home/u", Cwd: "/home/u", Home: "/home/u"}
	above := &Context{Workspace: "/home/u/proj", Cwd: "/home/u", Home: "/home/u"}
	for _, ctx := range []*Context{home, above} {
		if e.DecideLine(ctx, "du").CacheFree() {
			t.Errorf("DecideLine(%q) in %s: CacheFree() = true, want false", "du", ctx.Cwd)
		}
	}
}
