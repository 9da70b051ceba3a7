package landlock

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The enforcing half of TestBuildEnforces runs in a re-executed copy of the
// test binary: Landlock cannot be lifted again.
const enforceEnv = "FORGEBOX_LANDLOCK_TEST_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(enforceEnv); dir != "" {
		enforceAndProbe(dir)
		return
	}
	os.Exit(m.Run())
}

type verdicts map[string]string

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

// enforceAndProbe restricts this thread with a ruleset that reads / but
// not dir/secret, writes dir/work, and denies TCP; then tries each.
func enforceAndProbe(dir string) {
	runtime.LockOSThread()
	abi, err := ABI()
	if err != nil {
		os.Exit(3)
	}
	p := Policy{
		ReadRoots:  []string{"/"},
		WriteRoots: []string{filepath.Join(dir, "work")},
		Exclude:    []string{filepath.Join(dir, "secret")},
		DenyTCP:    true,
	}
	rs, _, err := Build(p, abi)
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(4)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		os.Exit(5)
	}
	if err := ll.LandlockRestrictSelf(int(rs.Fd()), 0); err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(6)
	}
	v := verdicts{}
	_, err = os.ReadFile(filepath.Join(dir, "secret", "key"))
	v["read secret"] = errString(err)
	_, err = os.ReadFile(filepath.Join(dir, "public"))
	v["read public"] = errString(err)
	v["write work"] = errString(os.WriteFile(filepath.Join(dir, "work", "new"), []byte("x"), 0o600))
	v["write beside"] = errString(os.WriteFile(filepath.Join(dir, "beside"), []byte("x"), 0o600))
	v["chmod public"] = errString(os.Chmod(filepath.Join(dir, "public"), 0o777))
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err == nil {
		err = unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
	}
	v["bind tcp"] = errString(err)
	json.NewEncoder(os.Stdout).Encode(v)
	os.Exit(0)
}

func TestBuildEnforces(t *testing.T) {
	abi, err := ABI()
	if err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	dir := t.TempDir()
	for _, d := range []string{"secret", "work"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "secret", "key"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "public"), []byte("p"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), enforceEnv+"="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("enforcing child: %v\n%s", err, out)
	}
	var v verdicts
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("child said %q: %v", out, err)
	}
	want := verdicts{
		"read secret":  "EACCES",
		"read public":  "ok",
		"write work":   "ok",
		"write beside": "EACCES",
		"chmod public": "ok", // Landlock does not cover metadata; the read-only mount does
		"bind tcp":     "EACCES",
	}
	if abi < 4 {
		want["bind tcp"] = "ok"
	}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("under the ruleset, %s = %s, want %s", k, v[k], w)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "beside")); err == nil {
		t.Error("the refused write created the file anyway")
	}
}
