package history

import (
	"regexp"
	"sync"
)

// A rule finds one shape of secret. Triggers are lower-case literals one of
// which every match contains: a cheap strings.Index over the text decides
// whether the regular expression runs at all, and then only over the lines
// that hold a trigger, so that redacting a large, ordinary output costs a few
// substring scans rather than a regexp pass per rule.
type rule struct {
	name     string
	triggers []string
	// re compiles on first use: most texts fire no trigger, and compiling
	// every rule up front would cost each forgebox process ~130 µs.
	re func() *regexp.Regexp
	// repl is a regexp template. Vendor prefixes (ghp_, AKIA, sk-ant-...)
	// are kept on purpose: they are public constants, not secret material,
	// and an auditor reading "ghp_[REDACTED]" knows which credential leaked
	// and where to revoke it.
	repl string
	// block rules may span lines and run over the whole text.
	block bool
	// needs lists bytes one of which every match holds besides its
	// trigger (the ':' or '=' of an assignment): a line with a trigger but
	// none of them, such as the path /etc/passwd, costs no regexp, nor its
	// compilation.
	needs string
}

// redacted replaces every secret.
const redacted = "[REDACTED]"

// secretKey is the alternation of key names whose value is a secret in
// KEY=value, "key": "value", key: value and --key value forms. "pwd" is left
// out on purpose: $PWD is the working directory.
const secretKey = `(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential|client[_-]?secret)`

// quotedValue keeps a value's quotes around [REDACTED] so that redacted JSON
// or shell text keeps its structure: groups 2 and 3 are the quote, if any.
// An unquoted value never starts with '[': "[REDACTED]" is left alone.
const quotedValue = `(?:(")[^"\r\n]*"|(')[^'\r\n]*'|[^\s"'&;,<>()\[\]{}][^\s"'&;,<>)\]}]*)`

// shapeRules returns the shape rules, in the order they apply. Each
// Redactor gets its own (compiled lazily, once), keeping the package free of
// mutable state.
func shapeRules() []rule {
	r := func(name, pattern, repl string, block bool, triggers ...string) rule {
		re := sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
		return rule{name: name, triggers: triggers, re: re, repl: repl, block: block}
	}
	// needing is r for a rule whose matches all hold one of needs.
	needing := func(needs string, ru rule) rule {
		ru.needs = needs
		return ru
	}
	return []rule{
		r("private key block",
			`-----BEGIN ([A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`,
			"-----BEGIN ${1}-----"+redacted+"-----END ${1}-----", true, "private key"),

		// Key and header forms run before the vendor shapes: the value goes
		// whole, whatever its shape, and is not left half-redacted.
		// Header forms keep the scheme word: "Authorization: Bearer [REDACTED]".
		needing(":=", r("authorization header",
			`(?i)(authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|basic|token|bot|digest|negotiate|aws4-hmac-sha256)[ \t]+)?)[^"'\r\n]+`,
			"${1}"+redacted, false, "authorization")),
		needing(" \t", r("bearer token", `\b((?i:bearer)[ \t]+)[A-Za-z0-9\-._~+/]{16,}=*`, "${1}"+redacted, false, "bearer")),
		needing(":", r("cookie header", `(?i)(\b(?:set-)?cookie[ \t]*:[ \t]*)[^\r\n"']+`, "${1}"+redacted, false, "cookie")),

		// KEY=value, key: value, "key": "value", ?token=..., &api_key=...
		needing(":=", r("secret assignment",
			`(?i)([a-z0-9_.\-]*`+secretKey+`[a-z0-9_\-]*["']?[ \t]*[:=][ \t]*)`+quotedValue,
			"${1}${2}${3}"+redacted+"${2}${3}", false,
			"password", "passwd", "passphrase", "secret", "token", "api_key", "api-key", "apikey",
			"access_key", "access-key", "accesskey", "private_key", "private-key", "privatekey", "credential")),
		// Signed URLs (S3 presigned, Azure SAS) carry the credential in sig=.
		needing("=", r("url signature", `(?i)([?&](?:sig|signature|x-amz-signature)=)[^\s&"'#]+`, "${1}"+redacted, false, "sig")),
		// --password VALUE on a command line.
		needing(" \t", r("secret flag",
			`(?i)((?:^|\s)--?[a-z0-9\-]*`+secretKey+`[ \t]+)(?:(")[^"\r\n]*"|(')[^'\r\n]*'|[^\s"'\-\[][^\s]*)`,
			"${1}${2}${3}"+redacted+"${2}${3}", false,
			"password", "passwd", "passphrase", "secret", "token", "api-key", "apikey")),

		r("aws access key id", `\b(AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`, "${1}"+redacted, false,
			"akia", "asia", "abia", "acca"),
		r("github token", `\b(gh[pousr]_)[A-Za-z0-9]{30,}\b`, "${1}"+redacted, false,
			"ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
		r("github fine-grained token", `\b(github_pat_)[A-Za-z0-9_]{20,}`, "${1}"+redacted, false, "github_pat_"),
		r("gitlab token", `\b(gl(?:pat|dt|rt|ptt|cbt|soat)-)[A-Za-z0-9_.\-]{20,}`, "${1}"+redacted, false,
			"glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glsoat-"),
		// Anthropic before OpenAI: both start with sk-.
		r("anthropic key", `\b(sk-ant-)[A-Za-z0-9_\-]{20,}`, "${1}"+redacted, false, "sk-ant-"),
		r("openai key", `\b(sk-(?:proj-|svcacct-|admin-)?)[A-Za-z0-9_\-]{20,}`, "${1}"+redacted, false, "sk-"),
		r("slack token", `\b(xox[abposre]-)[A-Za-z0-9\-]{10,}`, "${1}"+redacted, false, "xox"),
		r("slack webhook", `(hooks\.slack\.com/services/)[A-Za-z0-9/_\-]+`, "${1}"+redacted, false, "hooks.slack.com"),
		r("stripe key", `\b([rs]k_(?:live|test)_)[A-Za-z0-9]{16,}`, "${1}"+redacted, false, "k_live_", "k_test_"),
		r("google api key", `\b(AIza)[0-9A-Za-z_\-]{35}`, "${1}"+redacted, false, "aiza"),
		r("npm token", `\b(npm_)[A-Za-z0-9]{36}\b`, "${1}"+redacted, false, "npm_"),
		r("hugging face token", `\b(hf_)[A-Za-z0-9]{30,}\b`, "${1}"+redacted, false, "hf_"),
		r("jwt", `\b(eyJ)[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*`, "${1}"+redacted, false, "eyj"),

		// URL userinfo, after the vendor shapes so that a known token keeps
		// its prefix: keep the user, hide the password; a long user alone is a
		// token (https://TOKEN@host).
		needing("@", r("url password", `(?i)\b([a-z][a-z0-9+.\-]*://[^\s/:@]+:)[^\s/]*@`, "${1}"+redacted+"@", false, "://")),
		needing("@", r("url token", `(?i)\b([a-z][a-z0-9+.\-]*://)[A-Za-z0-9_\-.~%]{20,}@`, "${1}"+redacted+"@", false, "://")),
	}
}
