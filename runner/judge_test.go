package runner

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgebox/forgebox/policy"
)

// fakeHost is a home with a workspace in it, and no environment but env.
func fakeHost(t *testing.T, env map[string]string) (Host, string) {
	t.Helper()
	root := t.TempDir()
	// The temporary directory may lie behind a symbolic link (macOS).
	root, _ = filepath.EvalSymlinks(root)
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, "proj")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	get := func(k string) string {
		return strings.ReplaceAll(env[k], "$ROOT", root)
	}
	return Host{Getenv: get, Cwd: ws, Home: home}, root
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestXDGPaths(t *testing.T) {
	tests := []struct {
		name          string
		env           map[string]string
		config, state string
	}{
		{"defaults", nil, "home/.config/forgebox/config.json", "home/.local/state/forgebox/sessions"},
		{"XDG", map[string]string{"XDG_CONFIG_HOME": "$ROOT/c", "XDG_STATE_HOME": "$ROOT/s"}, "c/forgebox/config.json", "s/forgebox/sessions"},
		// The XDG specification says a relative path is to be ignored.
		{"relative XDG", map[string]string{"XDG_CONFIG_HOME": "c", "XDG_STATE_HOME": "s"}, "home/.config/forgebox/config.json", "home/.local/state/forgebox/sessions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, root := fakeHost(t, tt.env)
			config, err := h.userConfigPath()
			if err != nil || config != filepath.Join(root, tt.config) {
				t.Errorf("userConfigPath() = %q, %v; want %q", config, err, filepath.Join(root, tt.config))
			}
			state, err := h.sessionDir()
			if err != nil || state != filepath.Join(root, tt.state) {
				t.Errorf("sessionDir() = %q, %v; want %q", state, err, filepath.Join(root, tt.state))
			}
		})
	}
	if _, err := (Host{Getenv: func(string) string { return "" }}).userConfigPath(); err == nil {
		t.Errorf("userConfigPath() without $HOME or $XDG_CONFIG_HOME = nil error; want one")
	}
}

// Which files are read, in which role, and what they may change.
func TestLoadJudge(t *testing.T) {
	// frobnicate is a program forgebox knows nothing of: asked about
	// unless a rule says otherwise.
	rules := `{"forgebox": {"rules": {"allow": [{"command": "frobnicate --ok"}], "deny": [{"pattern": "frobnicate --no*", "reason": "no"}]}}}`
	tests := []struct {
		name   string
		files  map[string]string // relative to the root; "home/proj/" is the workspace
		links  map[string]string // symbolic links to make, relative to the root
		env    map[string]string
		policy string // --policy
		// The verdicts wanted; "" skips.
		ok, no   policy.Action
		roles    string
		warn     string // a substring of the warnings
		err      string // a substring of the error
		noAlways bool
	}{
		{name: "no File: the defaults", ok: policy.Ask, no: policy.Ask, roles: ""},
		{name: "the user's file", files: map[string]string{"home/.config/forgebox/config.json": rules},
			ok: policy.Allow, no: policy.Deny, roles: "user"},
		{name: "XDG_CONFIG_HOME", env: map[string]string{"XDG_CONFIG_HOME": "$ROOT/xdg"},
			files: map[string]string{"xdg/forgebox/config.json": rules}, ok: policy.Allow, no: policy.Deny, roles: "user"},
		{name: "--policy", policy: "other.json", files: map[string]string{"home/proj/other.json": rules,
			"home/.config/forgebox/config.json": `{}`}, ok: policy.Ask, no: policy.Deny, roles: "user_in_workspace",
			warn: "inside the workspace", noAlways: true},
		{name: "--policy outside the workspace", policy: "../p.json", files: map[string]string{"home/p.json": rules},
			ok: policy.Allow, no: policy.Deny, roles: "user"},
		{name: "missing --policy", policy: "nope.json", err: "nope.json"},
		{name: "malformed user file", files: map[string]string{"home/.config/forgebox/config.json": "{\n  \"forgebox\": {\"rules\": 3}}"},
			err: "config.json:2:"},
		{name: "workspace file tightens only", files: map[string]string{"home/.config/forgebox/config.json": rules,
			"home/proj/.forgebox/config.json": `{"forgebox": {"rules": {"allow": [{"pattern": "frobnicate *"}], "deny": [{"command": "frobnicate --ok"}]}}}`},
			ok: policy.Deny, no: policy.Deny, roles: "user,workspace", warn: "ignored"},
		{name: "malformed workspace file", files: map[string]string{"home/proj/.forgebox/config.json": `{"forgebox": {"mode": "lax"}}`},
			err: "proj/.forgebox/config.json:1:"},
		// A configuration kept elsewhere (dotfiles) is followed...
		{name: "user file is a link", files: map[string]string{"dotfiles/forgebox.json": rules},
			links: map[string]string{"home/.config/forgebox/config.json": "dotfiles/forgebox.json"}, ok: policy.Allow, no: policy.Deny, roles: "user"},
		// ...but one that leads into the workspace only tightens.
		{name: "user file links into the workspace", files: map[string]string{"home/proj/c.json": rules},
			links: map[string]string{"home/.config/forgebox/config.json": "home/proj/c.json"}, ok: policy.Ask, no: policy.Deny,
			roles: "user_in_workspace", warn: "can only tighten", noAlways: true},
		{name: "user file in the workspace by XDG", env: map[string]string{"XDG_CONFIG_HOME": "$ROOT/home/proj/cfg"},
			files: map[string]string{"home/proj/cfg/forgebox/config.json": rules}, ok: policy.Ask, no: policy.Deny,
			roles: "user_in_workspace", warn: "can only tighten", noAlways: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, root := fakeHost(t, tt.env)
			for p, c := range tt.files {
				writeFile(t, filepath.Join(root, p), c)
			}
			for p, target := range tt.links {
				p = filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(root, target), p); err != nil {
					t.Fatal(err)
				}
			}
			js, err := LoadJudge(h, PolicyOptions{File: tt.policy})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("LoadJudge() = %v; want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadJudge() = %v", err)
			}
			var roles []string
			for _, f := range js.Files {
				roles = append(roles, f.Role)
			}
			if got := strings.Join(roles, ","); got != tt.roles {
				t.Errorf("roles = %q; want %q", got, tt.roles)
			}
			if got := js.Engine.DecideLine(js.Ctx, "frobnicate --ok").Action; got != tt.ok {
				t.Errorf("Decide(%q) = %v, want %v", "frobnicate --ok", got, tt.ok)
			}
			if got := js.Engine.DecideLine(js.Ctx, "frobnicate --no").Action; got != tt.no {
				t.Errorf("Decide(%q) = %v, want %v", "frobnicate --no", got, tt.no)
			}
			if w := strings.Join(js.Warnings, "\n"); !strings.Contains(w, tt.warn) || (tt.warn == "" && w != "") {
				t.Errorf("warnings = %q; want %q", w, tt.warn)
			}
			if (js.NoAlways != "") != tt.noAlways {
				t.Errorf("noAlways = %q; want set: %v", js.NoAlways, tt.noAlways)
			}
		})
	}
}

// A workspace configuration the agent planted as a symbolic link, a FIFO,
// a device or a huge file is an error, promptly: never a hang, never
// ignored (ignoring it would drop its tightening).
func TestWorkspaceConfigRefusals(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, p, root string)
		err   string
	}{
		{"symlink", func(t *testing.T, p, root string) {
			writeFile(t, filepath.Join(root, "elsewhere.json"), "{}")
			if err := os.Symlink(filepath.Join(root, "elsewhere.json"), p); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"symlink to /dev/zero", func(t *testing.T, p, root string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"fifo", func(t *testing.T, p, root string) {
			if out, err := exec.Command("mkfifo", p).CombinedOutput(); err != nil {
				t.Skipf("mkfifo: %v %s", err, out)
			}
		}, "not a regular file"},
		{"directory", func(t *testing.T, p, root string) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"too large", func(t *testing.T, p, root string) {
			writeFile(t, p, `{"forgebox": {}}`+strings.Repeat(" ", policy.MaxConfigBytes))
		}, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, root := fakeHost(t, nil)
			p := filepath.Join(h.Cwd, ".forgebox", "config.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			tt.plant(t, p, root)
			done := make(chan error, 1)
			go func() {
				_, err := LoadJudge(h, PolicyOptions{})
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("LoadJudge() with a %s as the workspace configuration = %v; want an error with %q", tt.name, err, tt.err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("LoadJudge() with a %s as the workspace configuration hangs", tt.name)
			}
		})
	}
}

func TestReadSmallFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.json")
	writeFile(t, ok, "{}")
	if b, err := ReadSmallFile(ok); err != nil || string(b) != "{}" {
		t.Errorf("ReadSmallFile(regular) = %q, %v", b, err)
	}
	if _, err := ReadSmallFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadSmallFile(missing) = %v; want ErrNotExist", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadSmallFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("ReadSmallFile(/dev/zero) = %v; want a refusal", err)
		}
	}
}

func TestJudgeContext(t *testing.T) {
	h, root := fakeHost(t, map[string]string{"TMPDIR": "$ROOT/tmp"})
	link := filepath.Join(root, "link")
	if err := os.Symlink(h.Cwd, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cwd, workspace string
		ws, wantCwd          string
		err                  string
	}{
		{"default", h.Cwd, "", h.Cwd, h.Cwd, ""},
		{"through a link", link, "", h.Cwd, h.Cwd, ""},
		{"relative", h.Home, "proj", h.Cwd, h.Cwd, ""},
		// The command starts in the workspace when the current directory
		// lies outside it, as forgebox run starts it.
		{"cwd outside", other, link, h.Cwd, h.Cwd, ""},
		{"missing", h.Cwd, "nope", "", "", "does not exist"},
		{"file", h.Cwd, "../../root-file", "", "", "not a directory"},
	}
	writeFile(t, filepath.Join(root, "root-file"), "x")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hh := h
			hh.Cwd = tt.cwd
			ctx, err := JudgeContext(hh, tt.workspace)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("JudgeContext(%q) = %v; want an error with %q", tt.workspace, err, tt.err)
				}
				return
			}
			if err != nil || ctx.Workspace != tt.ws || ctx.Cwd != tt.wantCwd {
				t.Fatalf("JudgeContext(%q) = %+v, %v; want workspace %s, cwd %s", tt.workspace, ctx, err, tt.ws, tt.wantCwd)
			}
			want := []string{"/tmp", "/var/tmp", filepath.Join(root, "tmp")}
			for _, w := range want {
				if !strings.Contains(strings.Join(ctx.TempDirs, ","), w) {
					t.Errorf("TempDirs = %v; want %s among them", ctx.TempDirs, w)
				}
			}
			if ctx.Home != h.Home {
				t.Errorf("Home = %q; want %q", ctx.Home, h.Home)
			}
		})
	}
}

func TestResolvePath(t *testing.T) {
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	got := ResolvePath(filepath.Join(dir, "link", "not", "yet.json"))
	if want := filepath.Join(dir, "real", "not", "yet.json"); got != want {
		t.Errorf("ResolvePath() = %q, want %q", got, want)
	}
}
