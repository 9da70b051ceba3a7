package integration

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// secretLocation is one entry of forgebox doctor --json's secret_locations.
type secretLocation struct {
	Path   string `json:"path"`
	Dir    bool   `json:"dir"`
	Kind   string `json:"kind"`
	Source string `json:"source"`
}

// doctorSecrets runs forgebox doctor --json as the mode's user and returns
// the table of secret locations it reports and the paths it says a run
// hides now.
func (e *env) doctorSecrets() (table []secretLocation, hidden []string) {
	e.t.Helper()
	r := e.run([]string{"doctor", "--json"})
	var rep struct {
		SecretLocations []secretLocation `json:"secret_locations"`
		Hidden          []string         `json:"hidden"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		e.t.Fatalf("forgebox doctor --json: %v\nstdout: %s\nstderr: %s", err, r.stdout, r.stderr)
	}
	if len(rep.SecretLocations) == 0 {
		e.t.Fatalf("forgebox doctor --json lists no secret_locations\nstdout: %s", r.stdout)
	}
	return rep.SecretLocations, rep.Hidden
}

// plantSecret writes a marked secret at a home entry of the table: the
// file itself, or a file inside the directory. It returns the planted
// file.
func (e *env) plantSecret(home string, s secretLocation) string {
	p := filepath.Join(home, s.Path)
	if s.Dir {
		p = filepath.Join(p, "planted-secret")
	}
	e.write(p, "SECRET "+s.Path)
	return p
}

// readOp is a probe read of p, encoded so that a path with spaces stays
// one word.
func readOp(p string) string {
	b, _ := json.Marshal([]string{"read", p})
	return string(b)
}

// The credential files an outside attack suite read through forgebox
// (issue 16): a plain read in the sandbox must not yield them. This list
// is fixed here on purpose; TestSecretTableIsHidden covers the whole table.
func TestIssue16CredentialsAreHidden(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		files := []string{".pgpass", ".my.cnf", ".s3cfg", ".boto", ".config/rclone/rclone.conf", ".config/github-copilot/hosts.json"}
		var reads []string
		for _, f := range files {
			p := filepath.Join(e.home, f)
			e.write(p, "SECRET "+f)
			reads = append(reads, readOp(p))
		}
		allowed(t, e.probeHost(reads...)) // the control
		for _, v := range e.probe(nil, reads...) {
			if strings.Contains(v.Out, "SECRET") {
				t.Errorf("%s = %q; want the secret hidden", v.call(), v.Out)
			}
		}
	})
}

// Every entry of the secret table, as forgebox doctor --json reports it, is
// planted under the fake home and read in one sandbox run: none may yield
// its content, and doctor's hidden list names each one.
func TestSecretTableIsHidden(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		table, _ := e.doctorSecrets()
		var reads, planted []string
		var entries []secretLocation
		for _, s := range table {
			if filepath.IsAbs(s.Path) {
				continue // the system's: TestShadowIsHidden and the selftest
			}
			p := e.plantSecret(e.home, s)
			reads, planted, entries = append(reads, readOp(p)), append(planted, p), append(entries, s)
		}
		allowed(t, e.probeHost(reads...)) // the control: each is readable without forgebox
		_, hidden := e.doctorSecrets()
		for i, v := range e.probe(nil, reads...) {
			if strings.Contains(v.Out, "SECRET") {
				t.Errorf("%s (%s, %s) = %q; want the secret hidden", v.call(), entries[i].Kind, entries[i].Source, v.Out)
			}
			if root := filepath.Join(e.home, entries[i].Path); !slices.Contains(hidden, root) {
				t.Errorf("forgebox doctor --json: hidden does not list %s", root)
			}
		}
		if len(planted) < 60 {
			t.Errorf("the secret table has %d home entries; want the full list (60 or more)", len(planted))
		}
	})
}

// With XDG_CONFIG_HOME and XDG_DATA_HOME moved out of the home, the
// entries of ~/.config and ~/.local/share are hidden where the tools
// follow the variables to.
func TestSecretsUnderMovedXDGDirsAreHidden(t *testing.T) {
	forEachMode(t, func(t *testing.T, e *env) {
		data := filepath.Join(e.dir, "data")
		e.mkdir(data)
		e.extra = append(e.extra, "XDG_DATA_HOME="+data)
		files := []string{
			filepath.Join(e.configHome(), "gh/hosts.yml"),
			filepath.Join(e.configHome(), "rclone/rclone.conf"),
			filepath.Join(e.configHome(), "github-copilot/hosts.json"),
			filepath.Join(data, "keyrings/login.keyring"),
			filepath.Join(data, "opencode/auth.json"),
		}
		var reads []string
		for _, f := range files {
			e.write(f, "SECRET "+f)
			reads = append(reads, readOp(f))
		}
		allowed(t, e.probeHost(reads...))
		for _, v := range e.probe(nil, reads...) {
			if strings.Contains(v.Out, "SECRET") {
				t.Errorf("%s = %q; want the secret hidden (XDG_CONFIG_HOME=%s, XDG_DATA_HOME=%s)", v.call(), v.Out, e.configHome(), data)
			}
		}
	})
}
