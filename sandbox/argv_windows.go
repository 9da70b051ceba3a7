package sandbox

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf16"

	"golang.org/x/sys/windows"
)

// How the command is found and its command line built on Windows. A
// Windows program parses its own command line: the exec form composes it
// with the rules of the C runtime (windows.ComposeCommandLine); the -c
// form gives each shell the line in the form it parses.

// command builds the program, its path and its command line.
func (r *winRun) command(s Spec) error {
	path, pathext := lookupEnv(r.env, "PATH"), lookupEnv(r.env, "PATHEXT")
	if len(s.Argv) > 0 {
		r.argv = s.Argv
		app, err := lookPathWindows(s.Argv[0], path, pathext, r.cwd)
		if err != nil {
			return err
		}
		r.app = app
		if isBatch(app) {
			return r.batch(s.Argv[1:])
		}
		r.cmdline = windows.ComposeCommandLine(r.argv)
		return checkCmdline(r.cmdline)
	}
	shell := s.Shell
	if shell == "" {
		shell = "bash"
	}
	var app string
	var err error
	if shell == "bash" {
		app, err = findBash(path, pathext, r.cwd)
	} else {
		app, err = lookPathWindows(shell, path, pathext, r.cwd)
	}
	if err != nil {
		return err
	}
	r.app = app
	switch name := strings.ToLower(strings.TrimSuffix(strings.ToLower(filepath.Base(app)), ".exe")); name {
	case "cmd":
		// cmd.exe takes the rest of its command line as it is: /s strips
		// the outer quotes and leaves everything between them alone.
		r.argv = []string{shell, "/d", "/s", "/c", s.Command}
		r.cmdline = `cmd.exe /d /s /c "` + s.Command + `"`
	case "powershell", "pwsh":
		// -EncodedCommand: no quoting for PowerShell's own command line
		// parser to get wrong.
		u := utf16.Encode([]rune(s.Command))
		b := make([]byte, 2*len(u))
		for i, c := range u {
			b[2*i], b[2*i+1] = byte(c), byte(c>>8)
		}
		r.argv = []string{shell, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", s.Command}
		r.cmdline = windows.ComposeCommandLine([]string{shell, "-NoLogo", "-NoProfile", "-NonInteractive", "-EncodedCommand", base64.StdEncoding.EncodeToString(b)})
	default:
		r.argv = []string{shell, "-c", s.Command}
		r.cmdline = windows.ComposeCommandLine(r.argv)
	}
	return checkCmdline(r.cmdline)
}

// batch runs a .bat or .cmd file through cmd.exe explicitly. cmd.exe
// re-parses the arguments of a batch file with its own rules (the
// "BatBadBut" class of bugs, CVE-2024-24576): an argument it would read as
// syntax is refused rather than escaped, since no escaping is reliable
// across cmd.exe versions.
func (r *winRun) batch(args []string) error {
	for _, a := range args {
		if strings.ContainsAny(a, "\"%!^&|<>()\r\n\t") {
			return invalidf("cannot pass %q to the batch file %s safely: cmd.exe would read it as syntax; run it with -c and --shell cmd instead", a, r.app)
		}
	}
	comspec, err := windows.GetSystemDirectory()
	if err != nil {
		return &UnavailableError{Layer: "sandbox", Reason: "cannot find cmd.exe: " + err.Error(), Err: err}
	}
	parts := []string{`"` + r.app + `"`}
	for _, a := range args {
		if a == "" || strings.ContainsRune(a, ' ') {
			a = `"` + a + `"`
		}
		parts = append(parts, a)
	}
	r.cmdline = `cmd.exe /d /s /c "` + strings.Join(parts, " ") + `"`
	r.app = filepath.Join(comspec, "cmd.exe")
	return checkCmdline(r.cmdline)
}

func isBatch(app string) bool {
	ext := strings.ToLower(filepath.Ext(app))
	return ext == ".bat" || ext == ".cmd"
}

// checkCmdline refuses a command line over CreateProcess's 32767
// characters.
func checkCmdline(c string) error {
	if n := len(utf16.Encode([]rune(c))); n >= 32767 {
		return invalidf("the command line is %d characters long, over Windows's limit of 32766", n)
	}
	return nil
}

// findBash finds bash for the -c form: on PATH, else where Git for Windows
// installs it. The bash.exe of System32 is skipped: it hands the command
// to WSL, a virtual machine outside the job and the token.
func findBash(path, pathext, cwd string) (string, error) {
	var windir []string
	if d, err := windows.GetWindowsDirectory(); err == nil {
		windir = []string{d}
	}
	for _, d := range filepath.SplitList(path) {
		d = strings.Trim(d, `"`)
		if d == "" || !filepath.IsAbs(d) || containedIn(d, windir) {
			continue
		}
		if p, err := lookPathWindows(filepath.Join(d, "bash"), "", pathext, cwd); err == nil {
			return p, nil
		}
	}
	for _, id := range []*windows.KNOWNFOLDERID{windows.FOLDERID_ProgramFiles, windows.FOLDERID_LocalAppData} {
		base, err := windows.KnownFolderPath(id, 0)
		if err != nil {
			continue
		}
		for _, rel := range []string{`Git\bin\bash.exe`, `Programs\Git\bin\bash.exe`} {
			p := filepath.Join(base, rel)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
	}
	return "", &ExecError{Program: "bash", Errno: syscall.ENOENT}
}

// lookPathWindows finds a program the way a shell would for the command:
// with its PATH and PATHEXT, relative to its working directory when the
// name has a directory part, and never in the current directory
// implicitly.
func lookPathWindows(name, path, pathext, cwd string) (string, error) {
	exts := []string{".com", ".exe", ".bat", ".cmd"}
	if pathext != "" {
		exts = nil
		for _, e := range strings.Split(strings.ToLower(pathext), ";") {
			if e = strings.TrimSpace(e); strings.HasPrefix(e, ".") {
				exts = append(exts, e)
			}
		}
	}
	try := func(base string) (string, bool) {
		var cands []string
		if slices.Contains(exts, strings.ToLower(filepath.Ext(base))) {
			cands = []string{base}
		}
		for _, e := range exts {
			cands = append(cands, base+e)
		}
		for _, c := range cands {
			if st, err := os.Stat(c); err == nil && !st.IsDir() {
				return c, true
			}
		}
		return "", false
	}
	if strings.ContainsAny(name, `\/:`) {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if found, ok := try(p); ok {
			return found, nil
		}
		return "", &ExecError{Program: name, Errno: syscall.ENOENT}
	}
	for _, d := range filepath.SplitList(path) {
		d = strings.Trim(d, `"`)
		if d == "" || !filepath.IsAbs(d) {
			continue // a relative entry would search the working directory
		}
		if found, ok := try(filepath.Join(d, name)); ok {
			return found, nil
		}
	}
	return "", &ExecError{Program: name, Errno: syscall.ENOENT}
}
