package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// environ runs env in the sandbox and returns the command's environment.
func (e *env) environ(flags ...string) map[string]string {
	e.t.Helper()
	r := e.run(append(append([]string{"run"}, flags...), "--", "env"))
	if r.code != 0 {
		e.t.Fatalf("forgebox run -- env: exit %d\nstderr: %s", r.code, r.stderr)
	}
	vars := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			vars[k] = v
		}
	}
	return vars
}

// The command gets a small allowlist of the caller's variables, plus
// settings that keep tools from waiting for a user.
func TestEnvironmentAllowlist(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		passed := map[string]string{
			"USER": "someone", "LOGNAME": "someone", "SHELL": "/bin/bash", "LANGUAGE": "en",
			"TERM": "xterm-256color", "COLORTERM": "truecolor", "TZ": "Europe/Paris", "COLUMNS": "132", "LINES": "43",
			"NO_COLOR": "1", "CLICOLOR": "1", "CLICOLOR_FORCE": "1", "XDG_CONFIG_HOME": "/x/config",
			"XDG_CACHE_HOME": "/x/cache", "XDG_DATA_HOME": "/x/data", "XDG_STATE_HOME": "/x/state",
			"GOPATH": "/x/go", "GOROOT": "/usr/local/go", "CARGO_HOME": "/x/cargo", "RUSTUP_HOME": "/x/rustup",
			"JAVA_HOME": "/usr/lib/jvm", "VIRTUAL_ENV": "/x/venv", "LC_ALL": "C.UTF-8", "LC_TIME": "C",
		}
		dropped := map[string]string{
			"FOO": "bar", "SSH_AUTH_SOCK": "/run/user/1/ssh", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1/bus",
			"DOCKER_HOST": "unix:///var/run/docker.sock", "HISTFILE": "/x/hist", "PYTHONPATH": "/x/py",
		}
		for k, v := range passed {
			e.extra = append(e.extra, k+"="+v)
		}
		for k, v := range dropped {
			e.extra = append(e.extra, k+"="+v)
		}
		// The caller's pager and editor give way to non-interactive ones.
		e.extra = append(e.extra, "PAGER=less", "EDITOR=vim", "GIT_TERMINAL_PROMPT=1")
		// Without private caches: they would point XDG_CACHE_HOME,
		// CARGO_HOME ... at themselves, since none of these exists
		// (TestCacheFreshHome).
		got := e.environ("--no-cache")
		for k, v := range passed {
			if got[k] != v {
				t.Errorf("inside, %s = %q; want %q passed through", k, got[k], v)
			}
		}
		for k := range dropped {
			if v, ok := got[k]; ok {
				t.Errorf("inside, %s = %q; want it not inherited", k, v)
			}
		}
		want := map[string]string{
			"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": e.home, "LANG": "C.UTF-8",
			"PAGER": "cat", "GIT_PAGER": "cat", "MANPAGER": "cat", "GIT_TERMINAL_PROMPT": "0",
			"GIT_EDITOR": "true", "EDITOR": "true", "VISUAL": "true", "DEBIAN_FRONTEND": "noninteractive",
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("inside, %s = %q; want %q", k, got[k], v)
			}
		}
		for k := range got {
			if _, ok := passed[k]; !ok && want[k] == "" && k != "PWD" && k != "SHLVL" && k != "_" && k != "OLDPWD" {
				t.Errorf("inside, %s = %q: not on the allowlist", k, got[k])
			}
		}
	})
}

// Variables that look like credentials never pass by inheritance, nor do
// those that change how programs load; --env NAME passes one explicitly
// and --env NAME=VALUE sets one.
func TestSecretVariablesWithheld(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		hook := filepath.Join(e.ws, "hook.sh")
		ran := filepath.Join(e.ws, "hook-ran")
		e.write(hook, "echo loaded > "+ran+"\n")
		secrets := map[string]string{
			"GITHUB_TOKEN": "ghp_secret1", "OPENAI_API_KEY": "sk-secret2", "AWS_ACCESS_KEY_ID": "AKIAsecret3",
			"AWS_SECRET_ACCESS_KEY": "secret4", "DB_PASSWORD": "secret5", "MYSQL_PASSWD": "secret6",
			"SIGNING_KEY": "secret7", "CLIENT_SECRET": "secret8", "GOOGLE_APPLICATION_CREDENTIALS": "/x/secret9.json",
			"NPM_AUTH_TOKEN": "secret10", "HTTP_AUTHORIZATION": "Bearer secret11", "api_key": "secret12",
			"Stripe_Secret": "secret13",
		}
		loaders := map[string]string{
			"LD_PRELOAD": "/x/evil.so", "LD_LIBRARY_PATH": "/x/lib", "BASH_ENV": hook, "ENV": hook,
		}
		for k, v := range secrets {
			e.extra = append(e.extra, k+"="+v)
		}
		for k, v := range loaders {
			e.extra = append(e.extra, k+"="+v)
		}
		got := e.environ()
		for k := range secrets {
			if v, ok := got[k]; ok {
				t.Errorf("inside, %s = %q; want it withheld", k, v)
			}
		}
		for k := range loaders {
			if v, ok := got[k]; ok {
				t.Errorf("inside, %s = %q; want it withheld", k, v)
			}
		}
		// BASH_ENV would make bash -c source the hook: it must not run.
		r := e.sh("echo hi")
		if r.code != 0 || r.stdout != "hi\n" {
			t.Errorf("forgebox run -c 'echo hi': exit %d, stdout %q", r.code, r.stdout)
		}
		if s := snap(t, ran); s.exists {
			t.Errorf("BASH_ENV or ENV was honoured: %s ran inside the sandbox", hook)
		}

		// Explicitly named, a secret passes; NAME=VALUE sets and overrides.
		got = e.environ("--env", "GITHUB_TOKEN", "--env", "NEW_VAR=a=b c", "--env", "PAGER=more", "--env", "NOT_SET_ON_HOST")
		for k, v := range map[string]string{"GITHUB_TOKEN": "ghp_secret1", "NEW_VAR": "a=b c", "PAGER": "more"} {
			if got[k] != v {
				t.Errorf("with --env, inside %s = %q; want %q", k, got[k], v)
			}
		}
		if _, ok := got["OPENAI_API_KEY"]; ok {
			t.Errorf("--env GITHUB_TOKEN let OPENAI_API_KEY through as well")
		}
		if v, ok := got["NOT_SET_ON_HOST"]; ok {
			t.Errorf("--env NOT_SET_ON_HOST (unset on the host) = %q inside; want unset", v)
		}
	})
}
