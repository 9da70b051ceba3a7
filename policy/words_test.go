package policy

import (
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// argsOf parses a line and returns the args of its first simple command.
func argsOf(t *testing.T, line string) []Arg {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		t.Fatalf("parse %q: %v", line, err)
	}
	cmds := newParse(&Context{Home: "/home/u", Cwd: "/home/u/proj"}, line, 0).walk(f)
	if len(cmds) == 0 {
		t.Fatalf("parse %q: no command", line)
	}
	return cmds[0].Args
}

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		line   string
		want   []string
		static bool
	}{
		{`rm -rf /`, []string{"rm", "-rf", "/"}, true},
		{`\rm -rf /`, []string{"rm", "-rf", "/"}, true},
		{`'r''m' "-rf" /`, []string{"rm", "-rf", "/"}, true},
		{`r\m -r\f /`, []string{"rm", "-rf", "/"}, true},
		{`$'\x72\155' $'-\x72f' $'\u002f'`, []string{"rm", "-rf", "/"}, true},
		{`{rm,-rf,/}`, []string{"rm", "-rf", "/"}, true},
		{`rm -rf ~`, []string{"rm", "-rf", "/home/u"}, true},
		{`rm -rf ~/`, []string{"rm", "-rf", "/home/u/"}, true},
		{`rm -rf $HOME "${HOME}"/x`, []string{"rm", "-rf", "/home/u", "/home/u/x"}, true},
		{`echo "a\"b\$c\d"`, []string{"echo", `a"b$c\d`}, true},
		{"echo a\\\nb", []string{"echo", "ab"}, true},
		{`rm -rf "$DIR/"`, []string{"rm", "-rf", `"$DIR/"`}, false},
		{`echo $(date)`, []string{"echo", "$(date)"}, false},
		{`echo a{1..3}`, []string{"echo", "a1", "a2", "a3"}, true},
	} {
		t.Run(tc.line, func(t *testing.T) {
			args := argsOf(t, tc.line)
			var got []string
			static := true
			for _, a := range args {
				got = append(got, a.Value)
				static = static && a.Static
			}
			if !slices.Equal(got, tc.want) || static != tc.static {
				t.Errorf("words(%q) = %q static=%v, want %q static=%v", tc.line, got, static, tc.want, tc.static)
			}
		})
	}
}

func TestIfEmpty(t *testing.T) {
	for line, want := range map[string]string{
		`rm -rf "$DIR/"`:    "/",
		`rm -rf $DIR/*`:     "/*",
		`rm -rf ${A}${B}`:   "",
		`rm -rf "$(pwd)/x"`: "/x",
	} {
		args := argsOf(t, line)
		if got := args[2].IfEmpty; got != want {
			t.Errorf("IfEmpty(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestGlobAndPlace(t *testing.T) {
	ctx := &Context{Workspace: "/home/u/proj", Cwd: "/home/u/proj", Home: "/home/u"}
	for _, tc := range []struct {
		line string
		want Place
	}{
		{"x /", PlaceRoot},
		{"x /*", PlaceRoot},
		{"x ~", PlaceHomeRoot},
		{"x ~/*", PlaceHomeRoot},
		{"x ~/.bashrc", PlaceStartup},
		{"x ~/.ssh/authorized_keys", PlaceStartup},
		{"x ..", PlaceHomeRoot},
		{"x .", PlaceWorkspaceRoot},
		{"x *", PlaceWorkspaceRoot},
		{"x build/", PlaceWorkspace},
		{"x ./.git", PlaceGitDir},
		{"x .git/hooks/pre-commit", PlaceGitHooks},
		{"x /tmp/x", PlaceTemp},
		{"x /tmp", PlaceTempRoot},
		{"x /etc", PlaceSystemRoot},
		{"x /usr/lib/x", PlaceSystem},
		{"x /dev/sda1", PlaceDisk},
		{"x /dev/nvme0n1", PlaceDisk},
		{"x /dev/null", PlaceDevice},
		{"x ~bob", PlaceHomeRoot},
		{"x ../other", PlaceHome},
		{"x /srv/data/x", PlaceSystem},
		{"x /data/x", PlaceOutside},
		{"x $X", PlaceUnknown},
	} {
		args := argsOf(t, tc.line)
		if got := ctx.PlaceOf(args[1]); got != tc.want {
			t.Errorf("PlaceOf(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

func TestUnwrapForms(t *testing.T) {
	e := New(nil)
	ctx := &Context{Workspace: "/w", Cwd: "/w", Home: "/h"}
	for _, tc := range []struct {
		line    string
		program string
	}{
		{"sudo -u bob env -i A=1 timeout -s KILL 5 nice -n 5 nohup frob x", "frob"},
		{"command frob", "frob"},
		{"exec -a name frob", "frob"},
		{"builtin frob", "frob"},
		{"stdbuf -oL frob", "frob"},
		{"xargs -0 -n1 frob", "frob"},
		{"env -S 'frob -x'", "frob"},
		{"/usr/bin/env frob", "frob"},
		{"time -p frob", "frob"},
		{"doas -u root frob", "frob"},
		{"watch -x frob", "frob"},
		{"chrt -f 10 frob", "frob"},
		{"taskset -c 1 frob", "frob"},
		{"setsid -w frob", "frob"},
	} {
		t.Run(tc.line, func(t *testing.T) {
			d := e.DecideLine(ctx, tc.line)
			if len(d.Commands) == 0 {
				t.Fatalf("DecideLine(%q): no commands", tc.line)
			}
			j := d.Commands[0]
			if j.Program != tc.program {
				t.Errorf("DecideLine(%q).Commands[0].Program = %q, want %q (%+v)", tc.line, j.Program, tc.program, j)
			}
		})
	}
}

// Without a known home directory a tilde is never the workspace.
func TestTildeWithoutHome(t *testing.T) {
	ctx := &Context{Workspace: "/w", Cwd: "/w"}
	for p, want := range map[string]Place{"~": PlaceHomeRoot, "~/": PlaceHomeRoot, "~/.bashrc": PlaceStartup, "~/src/x": PlaceHome, "~bob/x": PlaceHome} {
		if got := ctx.Place(p); got != want {
			t.Errorf("Place(%q) = %v, want %v", p, got, want)
		}
	}
	if d := New(nil).DecideLine(ctx, "echo x > ~/.bashrc"); d.Action == Allow {
		t.Errorf("Decide(echo x > ~/.bashrc) without a home = allow, want ask")
	}
}
