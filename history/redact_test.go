package history

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A secret case: text holding a secret, the secret material that must not
// survive, and what should be left to show where it was.
type secretCase struct {
	name, text, secret, keep string
}

// Realistic shapes (not live credentials).
const privateKey = `-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEAx4UbaDzY4rGzZbp9Tc1kO6wQ0Eq4Q8Yf1Hc2Xs9tB7nQ3vL4
h1Y3c6jR9wK2pL5mN8qS1tV4xZ7aC0dF3gJ6kM9nP2rT5uW8yB1eH4iL7oQ0sU3v
-----END RSA PRIVATE KEY-----`

const callerSecret = "my-custom-secret-value-42"

func secretCases() []secretCase {
	return []secretCase{
		{"aws access key id", "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE", "AWS_ACCESS_KEY_ID=[REDACTED]"},
		{"aws access key id alone", "key AKIAIOSFODNN7EXAMPLE in log", "IOSFODNN7EXAMPLE", "AKIA[REDACTED]"},
		{"aws secret key", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key=[REDACTED]"},
		{"aws secret key ini", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key = [REDACTED]"},
		{"github ghp", "git clone https://ghp_R8x2kQ9vLmN4pT7wZ1yB3cD5fG6hJ0sK2aE9@github.com/o/r", "R8x2kQ9vLmN4pT7wZ1yB3cD5fG6hJ0sK2aE9", "ghp_[REDACTED]"},
		{"github gho", "token: gho_16C7e42F292c6912E7710c838347Ae178B4a", "16C7e42F292c6912E7710c838347Ae178B4a", "token: [REDACTED]"},
		{"github ghs", "GH=ghs_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "ghs_[REDACTED]"},
		{"github fine-grained", "github_pat_11ABCDEFG0aBcDeFgHiJkLmN_oPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ012", "11ABCDEFG0aBcDeFgHiJkLmN_oPqRsTuVwXyZ", "github_pat_[REDACTED]"},
		{"gitlab", "curl --header 'PRIVATE-TOKEN: glpat-xYz12AbCdEfGhIjKlMnO' https://gitlab.com/api/v4/user", "xYz12AbCdEfGhIjKlMnO", "PRIVATE-TOKEN: [REDACTED]'"},
		{"gitlab alone", "remote: glpat-xYz12AbCdEfGhIjKlMnO", "xYz12AbCdEfGhIjKlMnO", "glpat-[REDACTED]"},
		{"openai legacy", `OPENAI_API_KEY="sk-4fJ9kL2mN8pQ3rS7tU1vW5xY0zA6bC2dE9fG3hJ7kL1mN5pQ"`, "4fJ9kL2mN8pQ3rS7tU1vW5xY0zA6bC2dE9fG3hJ7kL1mN5pQ", "OPENAI_API_KEY="},
		{"openai project", "client = OpenAI(api_key='sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9oPq2rSt5uVw8xYz1A')", "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9oPq2rSt5uVw8xYz1A", "api_key="},
		{"openai in prose", "using key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z now", "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "sk-proj-[REDACTED]"},
		{"anthropic", "x-api-key: sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrStUvWxYz0123AA", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "x-api-key: "},
		{"anthropic in prose", "ANTHROPIC key is sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 ok", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "sk-ant-[REDACTED]"},
		{"slack bot", "SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-[REDACTED]"},
		{"slack user", `{"ok":true,"token":"xoxp-123456789012-123456789012-123456789012-0123456789abcdef0123456789abcdef"}`, "0123456789abcdef0123456789abcdef", `"token":"[REDACTED]"`},
		{"jwt", "Cookie-less jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c end", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "eyJ[REDACTED] end"},
		{"private key", "key:\n" + privateKey + "\ndone", "MIIEowIBAAKCAQEAx4UbaDzY4rGzZbp9", "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\ndone"},
		{"private key cut by truncation", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n[... 100 bytes omitted", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]"},
		{"bearer header", `curl -H "Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543" https://api.example.com`, "8f14e45fceea167a5a36dedd4bea2543", `Authorization: Bearer [REDACTED]" https://api.example.com`},
		{"basic header", "Authorization: Basic dXNlcjpjb3JyZWN0LWhvcnNlLWJhdHRlcnk=", "dXNlcjpjb3JyZWN0LWhvcnNlLWJhdHRlcnk", "Authorization: Basic [REDACTED]"},
		{"bearer alone", "sent Bearer 8f14e45fceea167a5a36dedd4bea2543", "8f14e45fceea167a5a36dedd4bea2543", "Bearer [REDACTED]"},
		{"url userinfo", "git push https://deploy:s3cr3tP4ss@git.example.com/repo.git", "s3cr3tP4ss", "https://deploy:[REDACTED]@git.example.com/repo.git"},
		{"url userinfo with @", "postgres://app:p@ss:w0rd@db.internal:5432/app", "ss:w0rd", "postgres://app:[REDACTED]@db.internal:5432/app"},
		{"url token user", "https://x0a1b2c3d4e5f6a7b8c9d0e1f2@github.com/o/r", "x0a1b2c3d4e5f6a7b8c9d0e1f2", "https://[REDACTED]@github.com"},
		{"token query", "GET https://api.example.com/v1/items?user=bob&token=tok_9f8e7d6c5b4a&page=2", "tok_9f8e7d6c5b4a", "token=[REDACTED]&page=2"},
		{"password query", "https://example.com/login?password=hunter2hunter2", "hunter2hunter2", "password=[REDACTED]"},
		{"api_key query", "https://maps.example.com/api?api_key=Zx9Yw8Xv7Wu6Vt5U&q=1", "Zx9Yw8Xv7Wu6Vt5U", "api_key=[REDACTED]&q=1"},
		{"env password", "DB_PASSWORD=correct-horse-battery-staple ./migrate", "correct-horse-battery-staple", "DB_PASSWORD=[REDACTED] ./migrate"},
		{"env quoted", `export GITHUB_TOKEN="0123abcd4567efgh"`, "0123abcd4567efgh", `GITHUB_TOKEN="[REDACTED]"`},
		{"json password", `{"user":"bob","password": "p@ssw0rd!x"}`, "p@ssw0rd!x", `"password": "[REDACTED]"`},
		{"password flag", "mysql -u root --password hunter2hunter2 db", "hunter2hunter2", "--password [REDACTED] db"},
		{"signed url", "https://bucket.s3.amazonaws.com/f?X-Amz-Credential=AKID%2F20250101&X-Amz-Signature=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "9f86d081884c7d659a2feaa0c55ad015", "X-Amz-Signature=[REDACTED]"},
		{"caller secret", "connecting with " + callerSecret + " now", callerSecret, "with [REDACTED] now"},
	}
}

// falsePositives must come through unchanged.
func falsePositives() []string {
	return []string{
		"commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
		"3f78685 fix: handle empty input",
		"request 123e4567-e89b-12d3-a456-426614174000 done",
		"The token bucket refills; ask for a password reset; keep the secret sauce.",
		"the bearer of this letter",
		"/usr/local/bin/go /home/u/.ssh/id_ed25519.pub C:\\Users\\me\\AppData\\Local",
		"task-management-system-for-teams and desk-organizer-deluxe-edition",
		"listening on http://localhost:8080/path and https://example.com/a/b",
		"mail user@example.com; git@github.com:org/repo.git",
		"PWD=/home/u/proj OLDPWD=/home/u",
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"AKIA is how AWS key ids start",
		"go test -run TestAuthorization ./...",
	}
}

func TestRedactorString(t *testing.T) {
	r := NewRedactor([]string{callerSecret, "short", ""})
	for _, c := range secretCases() {
		t.Run(c.name, func(t *testing.T) {
			got := r.String(c.text)
			if strings.Contains(got, c.secret) {
				t.Errorf("String(%q) = %q: secret %q survived", c.text, got, c.secret)
			}
			if !strings.Contains(got, c.keep) {
				t.Errorf("String(%q) = %q, want it to contain %q", c.text, got, c.keep)
			}
		})
	}
	for _, text := range falsePositives() {
		t.Run("keeps "+text, func(t *testing.T) {
			if got := r.String(text); got != text {
				t.Errorf("String(%q) = %q, want it unchanged", text, got)
			}
		})
	}
	if got := r.String("a short word"); got != "a short word" {
		t.Errorf("a caller secret under 6 bytes was applied: %q", got)
	}
}

func TestRedactorRun(t *testing.T) {
	r := NewRedactor([]string{callerSecret})
	argv := []string{"mysql", "--password", "hunter2hunter2", "-e", "select 1", "--token=abcdefgh1234"}
	run := &Run{
		Argv: argv,
		Env: []EnvVar{
			{Name: "HOME", Value: "/root"},
			{Name: "DATABASE_URL", Value: "postgres://app:s3cretpw@db/app"},
			{Name: "OPENAI_API_KEY", Value: "not flagged by the caller"},
			{Name: "CUSTOM", Value: callerSecret},
			{Name: "X", Secret: true, Value: "should not be here"},
		},
		Decision: json.RawMessage(`{"command":"echo ` + callerSecret + `","risk":3,"api_key":"abc","n":1.50}`),
	}
	r.Run(run)
	wantArgv := []string{"mysql", "--password", "[REDACTED]", "-e", "select 1", "--token=[REDACTED]"}
	if !reflect.DeepEqual(run.Argv, wantArgv) {
		t.Errorf("Argv = %q, want %q", run.Argv, wantArgv)
	}
	if argv[2] != "hunter2hunter2" {
		t.Errorf("Run wrote into the caller's argv slice: %q", argv)
	}
	wantEnv := []EnvVar{
		{Name: "HOME", Value: "/root"},
		{Name: "DATABASE_URL", Value: "postgres://app:[REDACTED]@db/app"},
		{Name: "OPENAI_API_KEY", Secret: true},
		{Name: "CUSTOM", Value: "[REDACTED]"},
		{Name: "X", Secret: true},
	}
	if !reflect.DeepEqual(run.Env, wantEnv) {
		t.Errorf("Env = %+v, want %+v", run.Env, wantEnv)
	}
	var d map[string]any
	if err := json.Unmarshal(run.Decision, &d); err != nil {
		t.Fatalf("Decision no longer JSON: %v: %s", err, run.Decision)
	}
	if d["command"] != "echo [REDACTED]" || d["api_key"] != "[REDACTED]" || !strings.Contains(string(run.Decision), `"n":1.50`) {
		t.Errorf("Decision = %s", run.Decision)
	}
}

// TestStoredAndExportedRedacted puts every secret in every field a caller
// fills and checks that neither Get nor Export gives any of them back.
func TestStoredAndExportedRedacted(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{Redact: NewRedactor([]string{callerSecret})})
	cases := secretCases()
	for _, c := range cases {
		r := &Run{
			Command: c.text, Argv: []string{"sh", "-c", c.text}, Args: []string{"run", "--", c.text},
			Cwd:      "/w",
			Env:      []EnvVar{{Name: "NOTE", Value: c.text}},
			Decision: json.RawMessage(`{"reason":` + mustJSON(t, c.text) + `}`),
		}
		if _, err := s.Start(ctx, r); err != nil {
			t.Fatalf("Start: %v", err)
		}
		r.Stdout, r.Stderr, r.ExitCode = c.text+"\n", "warning: "+c.text, ptr(0)
		r.Enforced = json.RawMessage(`{"note":` + mustJSON(t, c.text) + `}`)
		if err := s.Finish(ctx, r); err != nil {
			t.Fatalf("Finish: %v", err)
		}
		if _, err := s.Record(ctx, &Run{Status: StatusDenied, Command: c.text, Cwd: "/w"}); err != nil {
			t.Fatalf("Record: %v", err)
		}
	}
	var stored bytes.Buffer
	runs, err := s.List(ctx, Filter{})
	if err != nil || len(runs) != 2*len(cases) {
		t.Fatalf("List: %d runs, %v", len(runs), err)
	}
	for _, lr := range runs {
		r, err := s.Get(ctx, lr.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r)
		stored.Write(b)
		stored.WriteString(r.Stdout + r.Stderr) // unescaped, as a reader sees it
	}
	var export bytes.Buffer
	if err := s.Export(ctx, &export, Filter{}); err != nil {
		t.Fatalf("Export: %v", err)
	}
	for _, c := range cases {
		if strings.Contains(stored.String(), c.secret) {
			t.Errorf("%s: secret %q is in a stored row", c.name, c.secret)
		}
		if strings.Contains(export.String(), c.secret) {
			t.Errorf("%s: secret %q is in the export", c.name, c.secret)
		}
	}
	if !strings.Contains(export.String(), "[REDACTED]") {
		t.Errorf("export holds no [REDACTED] marker at all")
	}
}

func mustJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRulesCompile compiles every rule, whether or not a test text fires it.
func TestRulesCompile(t *testing.T) {
	if n := len(shapeRules()); n > 64 {
		t.Fatalf("%d rules: the scanner's masks hold 64", n)
	}
	for _, ru := range shapeRules() {
		t.Run(ru.name, func(t *testing.T) {
			if ru.re() == nil || len(ru.triggers) == 0 {
				t.Errorf("rule %q: no regexp or no trigger", ru.name)
			}
			for _, tr := range ru.triggers {
				if tr != asciiLower(tr) {
					t.Errorf("rule %q: trigger %q is not lower-case", ru.name, tr)
				}
			}
		})
	}
}

// TestScannerLines checks the automaton against the obvious per-line search.
func TestScannerLines(t *testing.T) {
	triggers := [][]string{{"sk-", "sk-ant-"}, {"token"}, {"ghp_", "gho_"}, {"://"}, {"private key"}, {"ant"}}
	sc := newScanner(triggers)
	texts := []string{
		"",
		"nothing here\nat all",
		"TOKEN=x\nsk-ant-abc and ghp_x\n\nhttps://h\n",
		"antsk-ant-token://",
		"-----BEGIN PRIVATE KEY-----\nabc\nprivate ke\ny",
		strings.Repeat("a long line without triggers but with sk and tok and gh_ ", 50) + "gho_",
		"\n\n\ntoken\n",
	}
	for _, text := range texts {
		var want []hit
		start := 0
		for _, line := range strings.SplitAfter(text, "\n") {
			body := strings.TrimSuffix(line, "\n")
			var m uint64
			for i, ts := range triggers {
				for _, tr := range ts {
					if strings.Contains(asciiLower(body), tr) {
						m |= 1 << i
					}
				}
			}
			if m != 0 {
				want = append(want, hit{start, start + len(body), m})
			}
			start += len(line)
		}
		if got := sc.lines(text); !reflect.DeepEqual(got, want) {
			t.Errorf("lines(%q) = %v, want %v", text, got, want)
		}
	}
}
