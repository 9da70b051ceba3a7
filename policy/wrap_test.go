package policy

import (
	"reflect"
	"testing"
)

// The options of every wrapper, from its manual: an option's argument is
// never the program, and an option the manual does not list asks.
func TestWrapperOptionsEnv(t *testing.T) {
	checkKnown(t, []kcase{
		{"-P glued", "env -P/usr/bin rm -rf /", Deny, Forbidden, 10},
		{"-P apart", "env -P /usr/bin rm -rf /", Deny, Forbidden, 10},
		{"-P in the workspace asks", "env -P ./bin git status", Ask, Caution, 4},
		{"-S sets PATH", "env -S 'PATH=/usr/bin' git reset --hard", Ask, Dangerous, 6},
		{"-S glued", "env -SPATH=/usr/bin git reset --hard", Ask, Dangerous, 6},
		{"--split-string=", "env --split-string='-i rm -rf /'", Deny, Forbidden, 10},
		{"-S holds the command", "env -S'rm -rf /'", Deny, Forbidden, 10},
		{"-S inside -S", `env -S "env -S 'rm -rf /'"`, Deny, Forbidden, 10},
		{"-S with escapes", `env -S 'rm\_-rf\_/'`, Deny, Forbidden, 10},
		{"-S with a comment", `env -S 'ls # rm -rf /'`, Allow, ReadOnly, 0},
		{"-S with a variable", `env -S 'rm -rf ${DIR}'`, Ask, Caution, 5},
		{"-S unclosed quote", `env -S "'rm -rf /"`, Ask, anyCat, anyRisk},
		{"-i", "env -i rm -rf /", Deny, Forbidden, 10},
		{"-u NAME", "env -u HOME rm -rf /", Deny, Forbidden, 10},
		{"-uNAME", "env -uHOME rm -rf /", Deny, Forbidden, 10},
		{"--unset NAME", "env --unset HOME rm -rf /", Deny, Forbidden, 10},
		{"-0 -v", "env -0 -v rm -rf /", Deny, Forbidden, 10},
		{"-iv", "env -iv rm -rf /", Deny, Forbidden, 10},
		{"--", "env -i -- rm -rf /", Deny, Forbidden, 10},
		{"--block-signal=", "env --block-signal=INT rm -rf /", Deny, Forbidden, 10},
		{"--block-signal", "env --block-signal rm -rf /", Deny, Forbidden, 10},
		{"--default-signal", "env --default-signal rm -rf /", Deny, Forbidden, 10},
		{"-a ARG", "env -a foo rm -rf /", Deny, Forbidden, 10},
		{"--argv0 ARG", "env --argv0 foo rm -rf /", Deny, Forbidden, 10},
		{"an abbreviated long option", "env --ign rm -rf /", Deny, Forbidden, 10},
		{"NAME=VALUE", "env FOO=bar rm -rf /", Deny, Forbidden, 10},
		{"LD_PRELOAD=", "env LD_PRELOAD=./x.so ls", Ask, Caution, 5},
		{"an unknown option asks", "env -x ls", Ask, Caution, 5},
		{"an unknown long option asks", "env --bogus ls", Ask, Caution, 5},
		{"an unknown option, the other reading", "env -Z x rm -rf /", Deny, Forbidden, 10},
		{"sudo unknown option, the other reading", "sudo --bogus x rm -rf /", Deny, Forbidden, 10},
		{"timeout unknown option, the other reading", "timeout --bogus 5 10 rm -rf /", Deny, Forbidden, 10},
		{"xargs unknown option, the other reading", "echo / | xargs -Z x rm -rf", Deny, Forbidden, 10},
		{"prints the environment", "env", Allow, ReadOnly, 0},
		{"-i alone", "env -i", Allow, ReadOnly, 0},
		{"--help", "env --help", Allow, ReadOnly, 0},
		{"an everyday env", "env NODE_ENV=test npm test", allowContained, anyCat, anyRisk},
	})
}

func TestWrapperOptionsCoreutils(t *testing.T) {
	checkKnown(t, []kcase{
		{"timeout -s SIG", "timeout -s KILL 5 rm -rf /", Deny, Forbidden, 10},
		{"timeout -sSIG", "timeout -sKILL 5 rm -rf /", Deny, Forbidden, 10},
		{"timeout --signal SIG", "timeout --signal KILL 5 rm -rf /", Deny, Forbidden, 10},
		{"timeout -k DUR", "timeout -k 1 5 rm -rf /", Deny, Forbidden, 10},
		{"timeout --kill-after DUR", "timeout --kill-after 1 5 rm -rf /", Deny, Forbidden, 10},
		{"timeout --preserve-status", "timeout --preserve-status 5 rm -rf /", Deny, Forbidden, 10},
		{"timeout --foreground -v", "timeout --foreground -v 5s rm -rf /", Deny, Forbidden, 10},
		{"timeout 1.5m", "timeout 1.5m ls", Allow, ReadOnly, 0},
		{"timeout unknown option", "timeout --bogus 5 ls", Ask, Caution, 5},
		{"timeout without a duration", "timeout -s 5 ls -l", Ask, Caution, 5},
		{"nice -n N", "nice -n 10 rm -rf /", Deny, Forbidden, 10},
		{"nice -nN", "nice -n10 rm -rf /", Deny, Forbidden, 10},
		{"nice -N", "nice -10 rm -rf /", Deny, Forbidden, 10},
		{"nice --N", "nice --10 rm -rf /", Deny, Forbidden, 10},
		{"nice --adjustment N", "nice --adjustment 5 rm -rf /", Deny, Forbidden, 10},
		{"nice --adjustment=N", "nice --adjustment=5 rm -rf /", Deny, Forbidden, 10},
		{"nice alone", "nice", Allow, ReadOnly, 0},
		{"nohup", "nohup rm -rf /", Deny, Forbidden, 10},
		{"nohup --", "nohup -- rm -rf /", Deny, Forbidden, 10},
		{"stdbuf -i0 -oL", "stdbuf -i0 -oL rm -rf /", Deny, Forbidden, 10},
		{"stdbuf -o MODE", "stdbuf -o L rm -rf /", Deny, Forbidden, 10},
		{"stdbuf --output MODE", "stdbuf --output L rm -rf /", Deny, Forbidden, 10},
		{"setsid -cfw", "setsid -cfw rm -rf /", Deny, Forbidden, 10},
		{"setsid --fork", "setsid --fork rm -rf /", Deny, Forbidden, 10},
		{"chroot --userspec U:G", "chroot --userspec u:g /x rm -rf /", Deny, Forbidden, 10},
		{"chroot --groups", "chroot --groups g1,g2 /x rm -rf /", Deny, Forbidden, 10},
		{"chroot --skip-chdir", "chroot --skip-chdir /x ls", Ask, Dangerous, 7},
		{"chroot without a command", "chroot /x", Ask, anyCat, 7},
		{"time -p", "time -p rm -rf /", Deny, Forbidden, 10},
		{"/usr/bin/time -f FMT", "/usr/bin/time -f %e rm -rf /", Deny, Forbidden, 10},
		{"/usr/bin/time -a -o FILE", "/usr/bin/time -a -o out.txt rm -rf /", Deny, Forbidden, 10},
		{"/usr/bin/time -o outside", "/usr/bin/time -o ~/.bashrc ls", Ask, Dangerous, 7},
		{"/usr/bin/time --format=", "/usr/bin/time --format=%e -v ls", Allow, ReadOnly, 0},
		{"command rm", "command rm -rf /", Deny, Forbidden, 10},
		{"command -p", "command -p rm -rf /", Deny, Forbidden, 10},
		{"command -v runs nothing", "command -v rm", Allow, ReadOnly, 0},
		{"command -V runs nothing", "command -V rm", Allow, ReadOnly, 0},
		{"command -pv runs nothing", "command -pv rm", Allow, ReadOnly, 0},
		{"builtin", "builtin rm -rf /", Deny, Forbidden, 10},
		{"exec -a NAME", "exec -a foo rm -rf /", Deny, Forbidden, 10},
		{"exec -aNAME", "exec -afoo rm -rf /", Deny, Forbidden, 10},
		{"exec -cl -a NAME", "exec -cl -a foo rm -rf /", Deny, Forbidden, 10},
		{"busybox APPLET", "busybox rm -rf /", Deny, Forbidden, 10},
		{"busybox sh -c", "busybox sh -c 'rm -rf /'", Deny, Forbidden, 10},
		{"busybox --list", "busybox --list", Allow, ReadOnly, 0},
		{"busybox env -C", "busybox env -C / rm -rf build", Ask, anyCat, anyRisk},
		{"watch -n N", "watch -n 5 rm -rf /", Deny, Forbidden, 10},
		{"watch --interval N", "watch --interval 5 rm -rf /", Deny, Forbidden, 10},
		{"watch -d -t -g -c -e", "watch -d -t -g -c -e rm -rf /", Deny, Forbidden, 10},
		{"watch -x", "watch -x rm -rf /", Deny, Forbidden, 10},
		{"watch --exec", "watch --exec rm -rf /", Deny, Forbidden, 10},
		{"watch ls", "watch -n 1 ls", Allow, Interactive, 1},
		{"watch unknown option", "watch -Z ls", Ask, Caution, 5},
	})
}

func TestWrapperOptionsUsers(t *testing.T) {
	checkKnown(t, []kcase{
		{"sudo -u U -g G", "sudo -u bob -g grp rm -rf /", Deny, Forbidden, 10},
		{"sudo -g G", "sudo -g grp rm -rf /", Deny, Forbidden, 10},
		{"sudo --user=U", "sudo --user=bob rm -rf /", Deny, Forbidden, 10},
		{"sudo -s CMD", "sudo -s rm -rf /", Deny, Forbidden, 10},
		{"sudo -i CMD", "sudo -i rm -rf /", Deny, Forbidden, 10},
		{"sudo -- CMD", "sudo -- rm -rf /", Deny, Forbidden, 10},
		{"sudo -C N", "sudo -C 3 rm -rf /", Deny, Forbidden, 10},
		{"sudo -h HOST", "sudo -h host rm -rf /", Deny, Forbidden, 10},
		{"sudo -p -r -t -T -R", "sudo -p x -r role -t type -T 10 -R /x rm -rf /", Deny, Forbidden, 10},
		{"sudo --preserve-env=LIST", "sudo --preserve-env=PATH rm -rf /", Deny, Forbidden, 10},
		{"sudo --preserve-env", "sudo --preserve-env rm -rf /", Deny, Forbidden, 10},
		{"sudo -k CMD runs CMD", "sudo -k rm -rf /", Deny, Forbidden, 10},
		{"sudo -D DIR", "sudo -D / rm -rf build", Ask, Dangerous, 7},
		{"sudo ls", "sudo ls", Ask, Dangerous, 7},
		{"sudo -e", "sudo -e /etc/hosts", Ask, anyCat, 7},
		{"sudoedit", "sudoedit /etc/hosts", Ask, anyCat, 7},
		{"sudo -l", "sudo -l", Ask, Caution, 3},
		{"sudo -l CMD lists", "sudo -l rm -rf /", Ask, Caution, 3},
		{"sudo -v", "sudo -v", Ask, Caution, 3},
		{"sudo -h", "sudo -h", Allow, ReadOnly, 0},
		{"sudo unknown option", "sudo -Z rm -rf /", Deny, Forbidden, 10},
		{"doas -u U", "doas -u bob rm -rf /", Deny, Forbidden, 10},
		{"doas -n", "doas -n rm -rf /", Deny, Forbidden, 10},
		{"doas -a STYLE", "doas -a passwd rm -rf /", Deny, Forbidden, 10},
		{"doas -s", "doas -s", Ask, anyCat, 7},
		{"doas -L", "doas -L", Ask, Caution, 3},
		{"doas -C checks", "doas -C /etc/doas.conf rm -rf /", Allow, ReadOnly, 0},
		{"pkexec --user U", "pkexec --user bob rm -rf /", Deny, Forbidden, 10},
		{"runuser -u U --", "runuser -u bob -- rm -rf /", Deny, Forbidden, 10},
		{"runuser -l U -c", "runuser -l bob -c 'rm -rf /'", Deny, Forbidden, 10},
		{"runuser U -c", "runuser bob -c 'rm -rf /'", Deny, Forbidden, 10},
		{"runuser -s SHELL -l U -c", "runuser -s /bin/bash -l bob -c 'rm -rf /'", Deny, Forbidden, 10},
		{"runuser -g -G", "runuser -g grp -G grp2 -u bob rm -rf /", Deny, Forbidden, 10},
		{"runuser -m -p", "runuser -m -p -u bob rm -rf /", Deny, Forbidden, 10},
		{"runuser -w LIST", "runuser -w PATH -u bob rm -rf /", Deny, Forbidden, 10},
		{"runuser U SCRIPT", "runuser bob -- -c 'rm -rf /'", Deny, Forbidden, 10},
		{"su -c", "su -c 'rm -rf /'", Deny, Forbidden, 10},
		{"su -c CMD U", "su -c 'rm -rf /' bob", Deny, Forbidden, 10},
		{"su --command=", "su --command='rm -rf /'", Deny, Forbidden, 10},
		{"su --command CMD", "su --command 'rm -rf /' bob", Deny, Forbidden, 10},
		{"su - -c", "su - -c 'rm -rf /'", Deny, Forbidden, 10},
		{"su -s SHELL", "su -s /bin/sh -c 'rm -rf /' bob", Deny, Forbidden, 10},
		{"su U -c (permuted)", "su bob -c 'rm -rf /'", Deny, Forbidden, 10},
		{"su U ARGS go to the shell", "su bob -- -c 'rm -rf /'", Deny, Forbidden, 10},
		{"su U", "su bob", Ask, anyCat, 7},
		{"su -", "su -", Ask, anyCat, 7},
		{"su -c harmless", "su -c ls bob", Ask, Dangerous, 7},
	})
}

// The reason names the user the command runs as, not an option's value.
func TestWrapperUserReasons(t *testing.T) {
	e := New(nil)
	for line, want := range map[string]string{
		"su -s /bin/sh -c ls bob":         "su runs as bob",
		"runuser -s /bin/sh -l bob -c ls": "runuser runs as bob",
		"sudo -g grp -u alice ls":         "sudo runs the command as alice",
	} {
		d := e.DecideLine(knownCtx, line)
		if got := d.Commands[0].Reasons[0]; got != want {
			t.Errorf("Decide(%q).Reasons[0] = %q, want %q", line, got, want)
		}
	}
}

func TestWrapperOptionsXargs(t *testing.T) {
	checkKnown(t, []kcase{
		{"code from echo", "echo 'rm -rf /' | xargs bash -c", Deny, Forbidden, 10},
		{"code from echo, sh", "echo 'rm -rf /' | xargs sh -c", Deny, Forbidden, 10},
		{"code from printf -d", `printf 'rm -rf /\n' | xargs -d '\n' sh -c`, Deny, Forbidden, 10},
		{"code from printf --delimiter", `printf 'rm -rf /\n' | xargs --delimiter='\n' sh -c`, Deny, Forbidden, 10},
		{"code from a here-string", "xargs sh -c <<< 'rm -rf /'", Deny, Forbidden, 10},
		{"code through eval", "echo 'rm -rf /' | xargs eval", Deny, Forbidden, 10},
		{"code from unknown input", "xargs sh -c", Ask, Caution, 6},
		{"code from cat", "cat list | xargs sh -c", Ask, Caution, 6},
		{"a script named by the input", "find . -name '*.sh' | xargs bash", Ask, Caution, 6},
		{"python code from the input", "cat x | xargs python3 -c", Ask, Caution, 6},
		{"-I into a code string", "cat hosts | xargs -I{} sh -c 'ping {}'", Ask, Caution, 6},
		{"-I into a code string, known", "echo / | xargs -I{} bash -c 'rm -rf {}'", Deny, Forbidden, 10},
		{"--replace -t into code", "echo / | xargs --replace -t bash -c 'rm -rf {}'", Deny, Forbidden, 10},
		{"-I{} as the code", "echo 'rm -rf /' | xargs -I{} bash -c {}", Deny, Forbidden, 10},
		{"-I, harmless code", "echo a.txt | xargs -I{} sh -c 'wc -l {}'", Allow, ReadOnly, 0},
		{"-i without {}: nothing put in", "echo / | xargs -i rm -rf", Allow, ReadOnly, 0},
		{"input as arguments of code", `cat list | xargs sh -c 'rm -rf "$@"' _`, Ask, Caution, 5},
		{"echo / | xargs rm -rf", "echo / | xargs rm -rf", Deny, Forbidden, 10},
		{"-0 with echo's newline", "echo / | xargs -0 rm -rf", Deny, Forbidden, 10},
		{"-a FILE: not what was echoed", "echo / | xargs -a list rm -rf", Ask, Caution, 5},
		{"-a FILE: not what was echoed (harmless echo)", "echo foo | xargs -a list rm -rf", Ask, Caution, 5},
		{"--arg-file=", "echo foo | xargs --arg-file=list rm -rf", Ask, Caution, 5},
		{"--arg-file FILE", "echo foo | xargs --arg-file list rm -rf", Ask, Caution, 5},
		{"-I{}", "echo / | xargs -I{} rm -rf {}", Deny, Forbidden, 10},
		{"-I %", "echo / | xargs -I % rm -rf %", Deny, Forbidden, 10},
		{"--replace (no value)", "echo / | xargs --replace rm -rf {}", Deny, Forbidden, 10},
		{"--replace={}", "echo / | xargs --replace={} rm -rf {}", Deny, Forbidden, 10},
		{"-i", "echo / | xargs -i rm -rf {}", Deny, Forbidden, 10},
		{"-I, several lines", "printf 'a\\n/\\n' | xargs -I{} rm -rf {}", Deny, Forbidden, 10},
		{"-E EOF", "echo / | xargs -E EOF rm -rf", Deny, Forbidden, 10},
		{"-e (optional value)", "echo / | xargs -e rm -rf", Deny, Forbidden, 10},
		{"-L N", "echo / | xargs -L 1 rm -rf", Deny, Forbidden, 10},
		{"-l (optional value)", "echo / | xargs -l rm -rf", Deny, Forbidden, 10},
		{"-n N -P N -s N", "echo / | xargs -n 1 -P 4 -s 100 rm -rf", Deny, Forbidden, 10},
		{"-r -t -p -x -o", "echo / | xargs -r -t -p -x -o rm -rf", Deny, Forbidden, 10},
		{"--max-args=N", "echo / | xargs --max-args=1 rm -rf", Deny, Forbidden, 10},
		{"--no-run-if-empty --verbose", "echo / | xargs --no-run-if-empty --verbose rm -rf", Deny, Forbidden, 10},
		{"unknown option", "echo foo | xargs --bogus ls", Ask, Caution, 5},
		{"find | xargs rm", "find . -name '*.o' | xargs rm -f", Ask, Caution, 5},
		{"xargs env -C", "xargs env -C / rm -rf build", Ask, Dangerous, 7},
		{"a harmless xargs", "find . -name '*.go' | xargs grep -n TODO", Allow, ReadOnly, 0},
		{"xargs alone", "echo a | xargs", Allow, ReadOnly, 0},
	})
}

func TestWrapperOptionsFindParallel(t *testing.T) {
	checkKnown(t, []kcase{
		{"find -exec ;", `find / -exec rm -rf {} \;`, Deny, Forbidden, 10},
		{"find -exec +", "find / -exec rm -rf {} +", Deny, Forbidden, 10},
		{"find -execdir", `find / -execdir rm -rf {} \;`, Deny, Forbidden, 10},
		{"find -ok", `find / -ok rm -rf {} \;`, Deny, Forbidden, 10},
		{"find -okdir", `find / -okdir rm -rf {} \;`, Deny, Forbidden, 10},
		{"find -exec sh -c", `find . -exec sh -c 'rm -rf /' \;`, Deny, Forbidden, 10},
		{"find -exec grep", `find . -name '*.go' -exec grep -l x {} +`, Allow, ReadOnly, 0},
		{"parallel CMD ::: ARGS", "parallel rm -rf ::: / /etc", Deny, Forbidden, 10},
		{"parallel {} ::: ARGS", "parallel rm -rf {} ::: /", Deny, Forbidden, 10},
		{"parallel -j N", "parallel -j4 rm -rf ::: /", Deny, Forbidden, 10},
		{"parallel -j N apart", "parallel -j 4 rm -rf ::: /", Deny, Forbidden, 10},
		{"parallel quoted command", "parallel 'rm -rf {}' ::: /", Deny, Forbidden, 10},
		{"parallel --pipe", "cat x | parallel --pipe rm -rf /", Deny, Forbidden, 10},
		{"parallel commands from :::", "parallel ::: 'rm -rf /' ls", Deny, Forbidden, 10},
		{"parallel commands from echo", "echo 'rm -rf /' | parallel", Deny, Forbidden, 10},
		{"parallel commands from unknown input", "cat jobs.txt | parallel", Ask, Caution, 6},
		{"parallel arguments from a file", "parallel rm -rf :::: list", Ask, Dangerous, 6},
		{"parallel -S runs elsewhere", "parallel -S host1 echo ::: a", Ask, Caution, 5},
		{"parallel echo", "parallel echo ::: a b", Allow, ReadOnly, 0},
		{"parallel gzip", "parallel gzip ::: a.log b.log", Allow, anyCat, anyRisk},
		{"parallel unknown option", "parallel --bogus echo ::: a", Ask, Caution, 5},
		{"parallel --dry-run", "parallel --dry-run rm -rf ::: /", Allow, ReadOnly, 0},
		{"parallel everyday options", "parallel --will-cite --bar --lb -k -j+0 --halt now,fail=1 gzip ::: a.log", Allow, anyCat, anyRisk},
		{"parallel bash -c, joined or quoted", "parallel bash -c 'rm -rf {}' ::: /", Deny, Forbidden, 10},
		{"parallel bash -c from echo", "echo / | parallel bash -c 'rm -rf {}'", Deny, Forbidden, 10},
		{"parallel {2} of two sources", "parallel sh -c 'git clean -f {2}' ::: x ::: -ffdx", Ask, Dangerous, 6},
		{"parallel rm in the project", "parallel rm -rf {} ::: build dist", Allow, SafeWrite, 2},
		{"parallel bash -c in the project", "parallel bash -c 'rm -rf {}' ::: build", Allow, SafeWrite, 2},
		{"parallel one-word command", "parallel 'gzip -9' ::: a.log", Allow, anyCat, anyRisk},
	})
}

func TestSplitEnvString(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{"a b  c", []string{"a", "b", "c"}, true},
		{`'a b' "c d"`, []string{"a b", "c d"}, true},
		{`a\_b`, []string{"a", "b"}, true},
		{`"a\_b"`, []string{"a b"}, true},
		{`a\tb`, []string{"a\tb"}, true},
		{`a \c b`, []string{"a"}, true},
		{`a #b c`, []string{"a"}, true},
		{`a#b`, []string{"a#b"}, true},
		{`'it\'s'`, []string{"it's"}, true},
		{`''`, []string{""}, true},
		{`'open`, []string{"open"}, false},
		{`a\qb`, []string{"aqb"}, false},
	} {
		got, ok := splitEnvString(staticArg(tc.in))
		var vals []string
		for _, a := range got {
			vals = append(vals, a.Value)
		}
		if !reflect.DeepEqual(vals, tc.want) || ok != tc.ok {
			t.Errorf("splitEnvString(%q) = %q, %v, want %q, %v", tc.in, vals, ok, tc.want, tc.ok)
		}
	}
}

func TestOptsLongPrefix(t *testing.T) {
	o := opts{long: " chdir= check debug "}
	for _, tc := range []struct {
		name, full string
		kind       byte
	}{
		{"chdir", "chdir", '='},
		{"chd", "chdir", '='},
		{"ch", "ch", 0}, // chdir or check: ambiguous
		{"d", "debug", ' '},
		{"x", "x", 0},
	} {
		if full, kind := o.longOpt(tc.name); full != tc.full || kind != tc.kind {
			t.Errorf("longOpt(%q) = %q, %q, want %q, %q", tc.name, full, kind, tc.full, tc.kind)
		}
	}
}
