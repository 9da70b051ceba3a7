package policy

import (
	"strings"
	"testing"
)

func TestInlinePython(t *testing.T) {
	checkKnown(t, []kcase{
		{"print", `python3 -c "print(1)"`, allowContained, anyCat, anyRisk},
		{"os.system", `python3 -c "import os; os.system('rm -rf ~')"`, Deny, Forbidden, 10},
		{"os.system harmless", `python3 -c "import os; os.system('ls -la')"`, allowContained, anyCat, anyRisk},
		{"os.popen", `python -c "import os; os.popen('git push --force').read()"`, Ask, Dangerous, 7},
		{"subprocess.run with a list", `python3 -c "import subprocess; subprocess.run(['rm', '-rf', '/'])"`, Deny, Forbidden, 10},
		{"subprocess.call with a string", `python3 -c "import subprocess; subprocess.call('rm -rf /', shell=True)"`, Deny, Forbidden, 10},
		{"subprocess.check_output", `python3 -c "import subprocess as sp; sp.check_output(['ls'])"`, allowContained, anyCat, anyRisk},
		{"an alias of subprocess", `python3 -c "import subprocess as sp; sp.run(['rm','-rf','/'])"`, Deny, Forbidden, 10},
		{"an imported name", `python3 -c "from os import system; system('rm -rf ~')"`, Deny, Forbidden, 10},
		{"a command built at run time", `python3 -c "import os,sys; os.system('rm -rf ' + sys.argv[1])"`, Ask, Caution, 5},
		{"a formatted command", `python3 -c "import os; os.system(f'rm -rf {d}')"`, Ask, Caution, 5},
		{"os.execvp", `python3 -c "import os; os.execvp('rm', ['rm', '-rf', '/'])"`, Deny, Forbidden, 10},
		{"pty.spawn", `python3 -c "import pty; pty.spawn('/bin/sh')"`, allowContained, anyCat, anyRisk},
		{"shutil.rmtree /", `python3 -c "import shutil; shutil.rmtree('/')"`, Deny, Forbidden, 10},
		{"shutil.rmtree the home", `python3 -c "import shutil, os; shutil.rmtree(os.path.expanduser('~'))"`, Deny, Forbidden, 10},
		{"shutil.rmtree Path.home()", `python3 -c "import shutil; from pathlib import Path; shutil.rmtree(Path.home())"`, Deny, Forbidden, 10},
		{"shutil.rmtree build", `python3 -c "import shutil; shutil.rmtree('build')"`, allowContained, anyCat, anyRisk},
		{"shutil.rmtree computed", `python3 -c "import shutil; shutil.rmtree(p)"`, Ask, Caution, 5},
		{"os.remove a system file", `python3 -c "import os; os.remove('/etc/passwd')"`, Ask, Dangerous, 7},
		{"os.unlink", `python3 -c "import os; os.unlink('x.txt')"`, allowContained, anyCat, anyRisk},
		{"Path.unlink", `python3 -c "from pathlib import Path; Path('/etc/hosts').unlink()"`, Ask, Dangerous, 7},
		{"open for writing", `python3 -c "open('/etc/hosts', 'w').write('x')"`, Ask, Dangerous, 7},
		{"open with mode=", `python3 -c "open('/home/u/.bashrc', mode='a').write('x')"`, Ask, Dangerous, 7},
		{"open in the workspace", `python3 -c "open('out.txt', 'w').write('x')"`, allowContained, anyCat, anyRisk},
		{"open for reading", `python3 -c "print(open('/etc/hosts').read())"`, allowContained, anyCat, anyRisk},
		{"Path.write_text", `python3 -c "from pathlib import Path; Path('/etc/motd').write_text('x')"`, Ask, Dangerous, 7},
		{"the network", `python3 -c "import urllib.request; urllib.request.urlopen('https://x.example')"`, Ask, Caution, 3},
		{"requests", `python3 -c "import requests; requests.get('https://x.example')"`, Ask, Caution, 3},
		{"exec", `python3 -c "exec('print(1)')"`, Ask, Caution, 5},
		{"eval", `python3 -c "eval(input())"`, Ask, Caution, 5},
		{"base64 and exec", `python3 -c "import base64; exec(base64.b64decode('cHJpbnQoMSk='))"`, Ask, Caution, 5},
		{"__import__", `python3 -c "__import__('os').system('id')"`, Ask, Caution, 5},
		{"chr chains", `python3 -c "print(chr(114)+chr(109)+chr(32))"`, Ask, Caution, 5},
		{"a method named eval is not eval", `python3 -c "model.eval()"`, allowContained, anyCat, anyRisk},
		{"a fork bomb", "python3 -c 'import os\nwhile True:\n    os.fork()'", Deny, Forbidden, 10},
		{"a here-document", "python3 <<'EOF'\nimport shutil\nshutil.rmtree('/home/u')\nEOF", Deny, Forbidden, 10},
		{"code piped from echo", `echo "import os; os.system('rm -rf /')" | python3`, Deny, Forbidden, 10},
		{"computed code", `python3 -c "$CODE"`, Ask, Caution, 5},
		{"triple-quoted command", `python3 -c "import os; os.system('''rm -rf /''')"`, Deny, Forbidden, 10},
		{"a raw string", `python3 -c "import os; os.system(r'rm -rf ~')"`, Deny, Forbidden, 10},
	})
}

func TestInlineOtherLanguages(t *testing.T) {
	checkKnown(t, []kcase{
		{"node log", `node -e "console.log(1)"`, allowContained, anyCat, anyRisk},
		{"node execSync", `node -e "require('child_process').execSync('rm -rf /')"`, Deny, Forbidden, 10},
		{"node exec of a destructured import", `node -e "const {exec} = require('child_process'); exec('rm -rf ~')"`, Deny, Forbidden, 10},
		{"node spawn with a list", `node -e "require('child_process').spawn('rm', ['-rf', '/'])"`, Deny, Forbidden, 10},
		{"node spawnSync harmless", `node -e "require('child_process').spawnSync('ls', ['-la'])"`, allowContained, anyCat, anyRisk},
		{"node exec computed", `node -e "require('child_process').exec(cmd)"`, Ask, Caution, 5},
		{"node template literal", "node -e \"require('child_process').execSync(`rm -rf ${d}`)\"", Ask, Caution, 5},
		{"node rmSync /", `node -e "require('fs').rmSync('/', {recursive: true, force: true})"`, Deny, Forbidden, 10},
		{"node rmSync dist", `node -e "require('fs').rmSync('dist', {recursive: true})"`, allowContained, anyCat, anyRisk},
		{"node unlinkSync", `node -e "require('fs').unlinkSync('/etc/passwd')"`, Ask, Dangerous, 7},
		{"node writeFileSync", `node -e "require('fs').writeFileSync('/home/u/.bashrc', 'x')"`, Ask, Dangerous, 7},
		{"node fetch", `node -e "fetch('https://x.example').then(r => r.text())"`, Ask, Caution, 3},
		{"node eval", `node -e "eval(process.argv[1])"`, Ask, Caution, 5},
		{"node new Function", `node -e "new Function(s)()"`, Ask, Caution, 5},
		{"perl print", `perl -e 'print "hi\n"'`, allowContained, anyCat, anyRisk},
		{"perl system string", `perl -e 'system("rm -rf ~")'`, Deny, Forbidden, 10},
		{"perl system list", `perl -e 'system("rm", "-rf", "/")'`, Deny, Forbidden, 10},
		{"perl system without parentheses", `perl -e 'system "rm -rf /" or die'`, Deny, Forbidden, 10},
		{"perl backticks", "perl -e 'my $x = `rm -rf ~`;'", Deny, Forbidden, 10},
		{"perl qx", `perl -e 'qx{rm -rf /}'`, Deny, Forbidden, 10},
		{"perl exec interpolated", `perl -e 'exec("rm -rf $dir")'`, Ask, Caution, 5},
		{"perl unlink", `perl -e 'unlink("/etc/passwd")'`, Ask, Dangerous, 7},
		{"perl rmtree", `perl -MFile::Path -e 'rmtree("/home/u")'`, Deny, Forbidden, 10},
		{"perl open a pipe", `perl -e 'open(my $f, "-|", "rm -rf ~")'`, Deny, Forbidden, 10},
		{"perl open to write", `perl -e 'open(my $f, ">", "/etc/hosts")'`, Ask, Dangerous, 7},
		{"perl fork bomb", `perl -e 'fork while fork'`, Deny, Forbidden, 10},
		{"perl -n filter", `perl -ne 'print if /x/' file`, allowContained, anyCat, anyRisk},
		{"ruby puts", `ruby -e 'puts 1'`, allowContained, anyCat, anyRisk},
		{"ruby system", `ruby -e 'system("rm -rf ~")'`, Deny, Forbidden, 10},
		{"ruby backticks", "ruby -e 'puts `rm -rf /`'", Deny, Forbidden, 10},
		{"ruby %x", `ruby -e '%x(rm -rf ~)'`, Deny, Forbidden, 10},
		{"ruby FileUtils.rm_rf", `ruby -rfileutils -e 'FileUtils.rm_rf("/")'`, Deny, Forbidden, 10},
		{"ruby File.write", `ruby -e 'File.write("/etc/hosts", "x")'`, Ask, Dangerous, 7},
		{"ruby fork bomb", `ruby -e 'loop { fork }'`, Deny, Forbidden, 10},
		{"ruby eval", `ruby -e 'eval(ARGV[0])'`, Ask, Caution, 5},
		{"php echo", `php -r 'echo 1;'`, allowContained, anyCat, anyRisk},
		{"php shell_exec", `php -r 'shell_exec("rm -rf /");'`, Deny, Forbidden, 10},
		{"php system harmless", `php -r 'system("ls");'`, allowContained, anyCat, anyRisk},
		{"php backticks", "php -r 'echo `rm -rf ~`;'", Deny, Forbidden, 10},
		{"php unlink", `php -r 'unlink("/etc/passwd");'`, Ask, Dangerous, 7},
		{"php eval", `php -r 'eval($_GET["x"]);'`, Ask, Caution, 5},
		{"lua os.execute", `lua -e 'os.execute("rm -rf /")'`, Deny, Forbidden, 10},
		{"lua os.remove", `lua -e 'os.remove("/etc/passwd")'`, Ask, Dangerous, 7},
		{"R system", `Rscript -e 'system("rm -rf ~")'`, Deny, Forbidden, 10},
		{"R unlink", `Rscript -e 'unlink("/home/u", recursive = TRUE)'`, Deny, Forbidden, 10},
		{"osascript do shell script", `osascript -e 'do shell script "rm -rf ~"'`, Deny, Forbidden, 10},
		{"osascript display", `osascript -e 'display dialog "hi"'`, Ask, Caution, 4},
	})
}

// TestInlineLimits: code past the limit is asked about, and many call
// sites stay cheap to judge.
func TestInlineLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		code string
		want string
	}{
		{"too long", strings.Repeat("print(1)\n", maxInlineBytes/9+1), "longer than"},
		{"too many calls", strings.Repeat("os.system('ls')\n", maxCalls+1), "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := New(nil).newState(knownCtx)
			j := &judge{st: st, ctx: knownCtx, cmd: &Command{Name: "python3"}}
			inlineCode(j, "python", tc.code, true)
			worst, reasons := 0, ""
			for _, f := range j.findings {
				worst = max(worst, f.Risk)
				reasons += f.Reason + "; "
			}
			if worst < 5 || !strings.Contains(reasons, tc.want) {
				t.Errorf("inlineCode(%s) = risk %d (%s), want at least 5 saying %q", tc.name, worst, reasons, tc.want)
			}
		})
	}
}
