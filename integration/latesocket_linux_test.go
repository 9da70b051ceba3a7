package integration

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Issue 16, class 6: a host socket bound after the command started (an
// ssh-agent or docker started during an hours-long MCP shell session)
// exists in no cover made at the start. The command waits for the host to
// bind a stream and a datagram socket in the home directory, then attacks
// them every way a Unix socket can: connect, connect+send, sendto, and
// sendto from a datagram socketpair. The listeners must see nothing.
//
// With --allow-unix-sockets the same attack gets through, which shows the
// test is real, and a socket the command binds itself works.
func TestLateHostSocketUnreachable(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		vs, stream, dgram := lateSocketAttack(t, e, nil)
		outcomeIs(t, vs[0], "ok")    // wrote "started"
		outcomeIs(t, vs[1], "ok")    // the socket exists now
		blocked(t, vs[2:7], "EPERM") // socket(AF_UNIX), socketpair(SOCK_DGRAM|SOCK_RAW)
		outcomeIs(t, vs[7], "EISCONN")
		outcomeIs(t, vs[8], "EPERM") // its own server: only with the opt-in
		if n := stream.Load(); n != 0 {
			t.Errorf("the host's stream socket, bound after the start, accepted %d connections from the sandbox; want 0", n)
		}
		if n := dgram.Load(); n != 0 {
			t.Errorf("the host's datagram socket, bound after the start, received %d datagrams from the sandbox; want 0", n)
		}
		_, res := e.runJSON([]string{"--", "true"})
		if res.Enforced == nil || !contains(res.Enforced.SeccompDenied, "socket(AF_UNIX)") {
			t.Errorf("enforced.seccomp_denied does not list socket(AF_UNIX)")
		}
		if got := enforcedField(t, res, "unix_sockets"); got != "refused" {
			t.Errorf("enforced.unix_sockets = %q, want refused", got)
		}
	})
}

func TestLateHostSocketReachableWithOptIn(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		vs, stream, dgram := lateSocketAttack(t, e, []string{"--allow-unix-sockets"})
		allowed(t, vs[:7])
		outcomeIs(t, vs[7], "EISCONN") // a stream socketpair never takes an address
		outcomeIs(t, vs[8], "ok")
		if n := stream.Load(); n != 1 {
			t.Errorf("with --allow-unix-sockets the late stream socket accepted %d connections; want 1 (the test would prove nothing)", n)
		}
		if n := dgram.Load(); n != 4 {
			t.Errorf("with --allow-unix-sockets the late datagram socket received %d datagrams; want 4", n)
		}
		_, res := e.runJSON([]string{"--allow-unix-sockets", "--", "true"})
		if got := enforcedField(t, res, "unix_sockets"); got != "allowed" {
			t.Errorf("enforced.unix_sockets = %q, want allowed", got)
		}
	})
}

// lateSocketAttack starts the probe in the sandbox, binds the host's
// sockets in the home directory once the probe has started, and returns
// the verdicts and what the host's sockets received.
func lateSocketAttack(t *testing.T, e *env, flags []string) (vs []verdict, stream *atomic.Int32, dgram *atomic.Int64) {
	t.Helper()
	started, release := filepath.Join(e.ws, "started"), filepath.Join(e.ws, "go")
	sp, dp := filepath.Join(e.home, "late.sock"), filepath.Join(e.home, "late-dg.sock")
	// --no-undo: the test waits for a file the probe writes in the
	// workspace, which undo shows only when the run ends.
	args := append(append([]string{"run", "--no-undo", "--ro", binDir}, flags...), "--", probe,
		"write "+started+" x",
		"wait-file "+release+" 30",
		"connect-unix "+sp,
		"connect-unixgram "+dp,
		"sendto-unixgram "+dp,
		"socketpair-sendto "+dp+" dgram",
		"socketpair-sendto "+dp+" raw",
		"socketpair-sendto "+dp+" stream",
		"unix-selftalk "+e.ws,
	)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := e.command(ctx, forgebox, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	e.skipJudge(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(30*time.Second, func() bool { _, err := os.Stat(started); return err == nil }) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the sandboxed probe never started: %s", stderr.String())
	}
	// Bound now, after the start: no cover was made for them.
	time.Sleep(200 * time.Millisecond)
	stream = &e.listenUnix(sp).accepted
	dgram = &atomic.Int64{}
	dl, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: dp, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dl.Close() })
	e.chown(dp)
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := dl.ReadFrom(buf); err != nil {
				return
			}
			dgram.Add(1)
		}
	}()
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if err != nil {
		t.Fatalf("forgebox run: %v\nstderr: %s", err, stderr.String())
	}
	time.Sleep(300 * time.Millisecond) // datagrams in flight
	vs = decodeVerdicts(t, stdout.String())
	if len(vs) != 9 {
		t.Fatalf("probe gave %d verdicts, want 9: %s", len(vs), stdout.String())
	}
	return vs, stream, dgram
}

func enforcedField(t *testing.T, res runResult, name string) string {
	t.Helper()
	en, _ := res.raw["enforced"].(map[string]any)
	s, _ := en[name].(string)
	return s
}

// An MCP shell session lives for hours; a host socket bound while it
// lives is the case class 6 is about. The session's forgebox run takes the
// server's run flags, so it gets the same filter: refused by default,
// reachable with serve --allow-unix-sockets.
func TestSessionLateHostSocket(t *testing.T) {
	forEachModeSerial(t, func(t *testing.T, e *env) {
		e = judgedEnv(t, e)
		// The judge is not what this is about.
		e.write(filepath.Join(e.configHome(), "forgebox", "config.json"), `{"forgebox": {"rules": {"allow": [{"pattern": "*"}]}}}`)
		for i, c := range []struct {
			flags    []string
			errno    string
			accepted int32
		}{
			{nil, `"errno":"EPERM"`, 0},
			{[]string{"--allow-unix-sockets"}, `"ok":true`, 1},
		} {
			sock := filepath.Join(e.home, "s"+string(rune('0'+i))+".sock")
			line := probe + " 'connect-unix " + sock + "'"
			cl := e.serveMCP(nil, append([]string{"--ro", binDir}, c.flags...)...)
			var st struct{ Session string }
			if res, text := cl.call("shell_start", map[string]any{}, &st); res.IsError || st.Session == "" {
				t.Fatalf("shell_start: %s", text)
			}
			// Bound after the session started.
			l := e.listenUnix(sock)
			var out shellOut
			_, text := cl.call("shell_exec", map[string]any{"session": st.Session, "command": line}, &out)
			if !out.Ran || !strings.Contains(out.Output, c.errno) {
				t.Errorf("serve %q: session ran %q: %s; want %s", c.flags, line, text, c.errno)
			}
			l.wantAccepted(t, sock, int(c.accepted))
		}
	})
}
