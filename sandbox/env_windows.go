package sandbox

import (
	"slices"
	"strings"
)

// windowsInherited are the host variables Windows programs need to start
// and find their way (the system's directories, the profile's known
// folders, the processor), inherited besides inheritedEnv. The lead may
// fold them into env.go.
var windowsInherited = []string{
	"SYSTEMROOT", "WINDIR", "SYSTEMDRIVE", "COMSPEC", "PATHEXT", "OS",
	"USERPROFILE", "APPDATA", "LOCALAPPDATA", "HOMEDRIVE", "HOMEPATH", "PUBLIC",
	"PROGRAMDATA", "ALLUSERSPROFILE", "PROGRAMFILES", "PROGRAMFILES(X86)", "PROGRAMW6432",
	"COMMONPROGRAMFILES", "COMMONPROGRAMFILES(X86)", "COMMONPROGRAMW6432",
	"USERNAME", "USERDOMAIN", "COMPUTERNAME", "PSMODULEPATH",
	"NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "PROCESSOR_IDENTIFIER", "PROCESSOR_LEVEL", "PROCESSOR_REVISION",
}

// windowsEnv is the command's environment on Windows: commandEnv's rules
// with names compared as Windows compares them (case-insensitively: PATH
// arrives as "Path"), the variables Windows programs need, and TEMP, TMP
// and TMPDIR pointing at the run's private temporary directory unless set
// explicitly.
func windowsEnv(s Spec, temp string) (env, withheld []string, err error) {
	up := func(kv string) string {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			return strings.ToUpper(k) + "=" + v
		}
		return kv
	}
	norm := s
	norm.Environ, norm.SetEnv, norm.PassEnv = nil, nil, nil
	for _, kv := range s.Environ {
		norm.Environ = append(norm.Environ, up(kv))
	}
	for _, kv := range s.SetEnv {
		norm.SetEnv = append(norm.SetEnv, up(kv))
	}
	for _, n := range s.PassEnv {
		norm.PassEnv = append(norm.PassEnv, strings.ToUpper(n))
	}
	env, withheld, err = commandEnv(norm)
	if err != nil {
		return nil, nil, err
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	host := map[string]string{}
	for _, kv := range norm.Environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			host[k] = v
		}
	}
	explicit := map[string]bool{}
	for _, kv := range norm.SetEnv {
		k, _, _ := strings.Cut(kv, "=")
		explicit[k] = true
	}
	for _, k := range windowsInherited {
		if _, set := vars[k]; !set && !LooksSecret(k) {
			if v, ok := host[k]; ok {
				vars[k] = v
			}
		}
	}
	if _, ok := host["PATH"]; !ok && !explicit["PATH"] {
		root := vars["SYSTEMROOT"]
		if root == "" {
			root = `C:\Windows`
		}
		vars["PATH"] = strings.Join([]string{root + `\System32`, root, root + `\System32\Wbem`, root + `\System32\WindowsPowerShell\v1.0`}, ";")
	}
	for _, k := range []string{"TEMP", "TMP", "TMPDIR"} {
		if !explicit[k] {
			vars[k] = temp
		}
	}
	env = env[:0]
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env, withheld, nil
}
