package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func TestCommandEnv(t *testing.T) {
	host := []string{
		"PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm",
		"AWS_SECRET_ACCESS_KEY=aws-secret", "GITHUB_TOKEN=gh-token", "OPENAI_API_KEY=sk-1", "DB_PASSWORD=pw",
		"LD_PRELOAD=/evil.so", "BASH_ENV=/evil.sh", "SSH_AUTH_SOCK=/run/user/1/ssh", "PAGER=less",
		"RANDOM_TOOL_SETTING=1", "LC_SECRET_TOKEN=leak",
	}
	env, withheld, err := commandEnv(Spec{Environ: host, PassEnv: []string{"GITHUB_TOKEN", "NOT_SET"}, SetEnv: []string{"FOO=bar", "PAGER=more"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"PATH": "/usr/bin:/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "LC_ALL": "C", "TERM": "xterm",
		"GITHUB_TOKEN": "gh-token", "FOO": "bar", "PAGER": "more", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0",
		"EDITOR": "true", "GIT_EDITOR": "true",
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("commandEnv: %s=%q; want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "DB_PASSWORD", "LD_PRELOAD", "BASH_ENV", "SSH_AUTH_SOCK", "RANDOM_TOOL_SETTING", "LC_SECRET_TOKEN", "NOT_SET"} {
		if _, ok := got[k]; ok {
			t.Errorf("commandEnv passed %s; it must not be inherited", k)
		}
	}
	for _, v := range []string{"aws-secret", "sk-1", "pw", "leak"} {
		if !slices.Contains(withheld, v) {
			t.Errorf("withheld values %v lack %q: history could not redact it", withheld, v)
		}
	}
	if !slices.IsSorted(env) {
		t.Error("environment is not sorted: runs would not be reproducible")
	}
}

func TestCommandEnvDefaults(t *testing.T) {
	env, _, err := commandEnv(Spec{Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	if lookupEnv(env, "PATH") != defaultPath || lookupEnv(env, "HOME") != "/home/u" {
		t.Errorf("commandEnv with no host environment = %v; want the default PATH and HOME", env)
	}
}

func TestCommandEnvRejects(t *testing.T) {
	for _, s := range []Spec{
		{SetEnv: []string{"=x"}},
		{SetEnv: []string{"A\x00B=x"}},
		{SetEnv: []string{"A=x\x00y"}},
		{PassEnv: []string{"A=B"}},
		{PassEnv: []string{""}},
	} {
		if _, _, err := commandEnv(s); err == nil {
			t.Errorf("commandEnv(%q, %q) = nil error; want a refusal", s.PassEnv, s.SetEnv)
		}
	}
}

func TestLooksSecret(t *testing.T) {
	tests := map[string]bool{
		"GITHUB_TOKEN": true, "AWS_REGION": true, "my_api_key": true, "SECRET": true, "DB_PASSWD": true,
		"SSH_KEY": true, "NPM_AUTH_TOKEN": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "SENTRY_DSN": true,
		"LD_PRELOAD": true, "BASH_ENV": true, "GH_PAT": true,
		"PATH": false, "HOME": false, "TERM": false, "KEYBOARD": false, "LANG": false, "EDITOR": false,
	}
	for name, want := range tests {
		if got := LooksSecret(name); got != want {
			t.Errorf("LooksSecret(%q) = %v; want %v", name, got, want)
		}
	}
}
