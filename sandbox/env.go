package sandbox

import (
	"slices"
	"strings"
)

// inheritedEnv are the host variables a command inherits without being asked.
var inheritedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM",
	"COLORTERM", "TZ", "COLUMNS", "LINES", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
	"GOPATH", "GOROOT", "CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME", "VIRTUAL_ENV",
}

// nonInteractiveEnv keeps agents from hanging on a pager, an editor or a
// credential prompt. The caller's values for these are not inherited; an
// explicit --env NAME=VALUE still wins.
var nonInteractiveEnv = []string{
	"PAGER=cat",
	"GIT_PAGER=cat",
	"MANPAGER=cat",
	"GIT_TERMINAL_PROMPT=0",
	"GIT_EDITOR=true",
	"EDITOR=true",
	"VISUAL=true",
	"DEBIAN_FRONTEND=noninteractive",
}

// proxyEnv points the clients that honour the proxy variables (curl, git,
// npm, pip, go, ...) at the allowlist's proxy. ALL_PROXY is SOCKS5 with
// names resolved by the proxy (socks5h), for what speaks no HTTP proxy:
// the sandbox has no resolver of its own. NO_PROXY keeps the sandbox's
// own loopback direct.
func proxyEnv() map[string]string {
	env := map[string]string{}
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"} {
		v := "http://" + ProxyAddr
		switch name {
		case "ALL_PROXY":
			v = "socks5h://" + ProxyAddr
		case "NO_PROXY":
			v = "localhost,127.0.0.1,::1"
		}
		env[name], env[strings.ToLower(name)] = v, v
	}
	// Node's own fetch honours them from Node 24 on, when asked to.
	env["NODE_USE_ENV_PROXY"] = "1"
	return env
}

// neverInherited change how programs load or start; they pass only when
// named explicitly.
var neverInherited = []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "PROMPT_COMMAND"}

// secretWords make a variable name look like it holds a credential.
var secretWords = []string{
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
	"API_KEY", "APIKEY", "PRIVATE_KEY", "AUTH", "COOKIE", "SESSION",
}

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// LooksSecret reports whether a variable name looks like it holds a
// credential: such variables never pass by inheritance.
func LooksSecret(name string) bool {
	n := strings.ToUpper(name)
	if strings.HasPrefix(n, "AWS_") || strings.HasSuffix(n, "_KEY") || strings.HasSuffix(n, "_PAT") ||
		strings.HasSuffix(n, "_DSN") || slices.Contains(neverInherited, n) {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// CommandEnv is the environment the command of s gets, and the values of
// the host variables withheld from it because they look secret: whatever
// records a run redacts those.
func CommandEnv(s Spec) (env, withheld []string, err error) { return commandEnv(s) }

// commandEnv computes the command's environment. It also returns the values
// of host variables withheld because they look secret, so that they can be
// redacted from anything recorded about the run.
func commandEnv(s Spec) (env []string, withheld []string, err error) {
	host := map[string]string{}
	for _, kv := range s.Environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			host[k] = v
		}
	}
	vars := map[string]string{}
	for k, v := range host {
		switch {
		case inheritable(k) && !LooksSecret(k):
			vars[k] = v
		case LooksSecret(k) && v != "":
			withheld = append(withheld, v)
		}
	}
	for _, kv := range nonInteractiveEnv {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	if s.Network == NetAllow {
		for k, v := range proxyEnv() {
			vars[k] = v
		}
	}
	for _, name := range s.PassEnv {
		if err := checkEnvName(name); err != nil {
			return nil, nil, err
		}
		if v, ok := host[name]; ok {
			vars[name] = v
		}
	}
	for _, kv := range s.SetEnv {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, nil, invalidf("--env %q: want NAME or NAME=VALUE", kv)
		}
		if err := checkEnvName(k); err != nil {
			return nil, nil, err
		}
		if strings.IndexByte(v, 0) >= 0 {
			return nil, nil, invalidf("--env %s: value contains a NUL byte", k)
		}
		vars[k] = v
	}
	if vars["PATH"] == "" {
		vars["PATH"] = defaultPath
	}
	if _, ok := vars["HOME"]; !ok && s.Home != "" {
		vars["HOME"] = s.Home
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	slices.Sort(withheld)
	return env, withheld, nil
}

func inheritable(name string) bool {
	return slices.Contains(inheritedEnv, name) || strings.HasPrefix(name, "LC_")
}

func checkEnvName(name string) error {
	if name == "" || strings.ContainsAny(name, "=\x00") {
		return invalidf("invalid environment variable name %q", name)
	}
	return nil
}

// lookupEnv returns the value of name in env (NAME=VALUE entries).
func lookupEnv(env []string, name string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}
