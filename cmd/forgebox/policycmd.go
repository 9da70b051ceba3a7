package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/runner"
)

const policyUsage = `Usage:
  forgebox policy list [--json]
      the configuration files read, the mode and thresholds, every rule with
      its source, the session's approvals and the warnings
  forgebox policy explain (-c 'LINE' | -- PROGRAM [ARGS...] | 'LINE')
      why a command is allowed, asked about or denied, and what you can do
  forgebox policy approve (--session ID | --always) (-c 'LINE' | -- PROGRAM [ARGS...])
      record approvals for a command's asks, for harnesses without a
      terminal: for the session (then run with --session ID), or for good
      (allow rules in your configuration file); exit 0 when recorded, 126
      for a denied command, 125 when the scope is not offered (R3 is asked
      every time) or on an error
  forgebox policy revoke [--session ID] (--all | PATTERN)
      remove approvals: allow rules that approvals wrote to your
      configuration file (those with "added"), or with --session ID that
      session's; exit 0 when something was removed, 1 when nothing matched

Every subcommand takes --policy FILE, --workspace DIR and --session ID, as
forgebox run does.
`

// exitNothing is the status of policy revoke when nothing matched.
const exitNothing = 1

func (e env) policyCmd(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, policyUsage)
		return exitForgebox
	}
	switch args[0] {
	case "list":
		return e.policyList(args[1:])
	case "explain":
		return e.policyExplain(args[1:])
	case "approve":
		return e.policyApprove(args[1:])
	case "revoke":
		return e.policyRevoke(args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(e.stdout, policyUsage)
		return 0
	}
	e.errorf("policy: unknown subcommand %q; run forgebox policy --help", args[0])
	return exitForgebox
}

// parseFlags parses a policy subcommand's flags; it returns false and the
// exit code when there is nothing more to do.
func (e env) parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, policyUsage+"\nFlags of forgebox policy "+fs.Name()+":\n")
			fs.SetOutput(e.stdout)
			fs.PrintDefaults()
			return 0, false
		}
		e.errorf("policy %s: %v; see forgebox policy --help", fs.Name(), err)
		return exitForgebox, false
	}
	return 0, true
}

// listedRule is a rule with where it came from.
type listedRule struct {
	policy.Rule
	Source string
}

// MarshalJSON writes the rule's fields and its source side by side.
func (r listedRule) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.Rule)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["source"] = r.Source
	return json.Marshal(m)
}

// policyListing is what forgebox policy list --json prints.
type policyListing struct {
	Files      []runner.ConfigFile `json:"files"`
	UserConfig string              `json:"user_config"`
	Mode       string              `json:"mode"`
	Thresholds struct {
		AutoApprove    int `json:"auto_approve"`
		SessionApprove int `json:"session_approve"`
		AlwaysAsk      int `json:"always_ask"`
		Block          int `json:"block"`
	} `json:"thresholds"`
	Allow []listedRule `json:"allow"`
	Ask   []listedRule `json:"ask"`
	Deny  []listedRule `json:"deny"`
	// Tighter are the ask rules of configurations that only tighten.
	Tighter  []listedRule    `json:"tighter"`
	Session  *sessionListing `json:"session"`
	Warnings []string        `json:"warnings"`
}

type sessionListing struct {
	ID    string       `json:"id"`
	Store string       `json:"store,omitempty"`
	Rules []listedRule `json:"rules"`
}

func listed(rules []policy.Rule) []listedRule {
	out := []listedRule{}
	for _, r := range rules {
		out = append(out, listedRule{Rule: r, Source: r.Source})
	}
	return out
}

func (e env) policyList(args []string) int {
	var o policyOpts
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	o.register(fs, true)
	jsonOut := fs.Bool("json", false, "print the listing as one JSON object")
	if code, ok := e.parseFlags(fs, args); !ok {
		return code
	}
	js, code := e.loadJudge(o)
	if js == nil {
		return code
	}
	p := js.Engine.Policy()
	l := policyListing{Files: js.Files, UserConfig: js.UserConfig, Mode: p.Mode.String(),
		Allow: listed(p.Allow), Ask: listed(p.Ask), Deny: listed(p.Deny), Tighter: listed(p.Tighter), Warnings: js.Warnings}
	if l.Files == nil {
		l.Files = []runner.ConfigFile{}
	}
	if l.Warnings == nil {
		l.Warnings = []string{}
	}
	t := p.Thresholds
	l.Thresholds.AutoApprove, l.Thresholds.SessionApprove, l.Thresholds.AlwaysAsk, l.Thresholds.Block = t.AutoApprove, t.SessionApprove, t.AlwaysAsk, t.Block
	if js.SessionID != "" {
		l.Session = &sessionListing{ID: js.SessionID, Rules: listed(js.Ctx.Session)}
		if js.Store != nil {
			l.Session.Store = js.Store.Path()
		}
	}
	if *jsonOut {
		e.printJSON(l)
		return 0
	}
	writeListing(e.stdout, l)
	return 0
}

func writeListing(w io.Writer, l policyListing) {
	if len(l.Files) == 0 {
		fmt.Fprintf(w, "files: none (the defaults; your configuration file would be %s)\n", l.UserConfig)
	}
	for _, f := range l.Files {
		role := map[string]string{"user": "yours", "workspace": "the workspace's: tightens only",
			"user_in_workspace": "yours, but inside the workspace: tightens only"}[f.Role]
		fmt.Fprintf(w, "file: %s (%s)\n", f.Path, role)
	}
	fmt.Fprintf(w, "mode: %s\n", l.Mode)
	t := l.Thresholds
	fmt.Fprintf(w, "thresholds: autoApprove %d, sessionApprove %d, alwaysAsk %d, block %d (risk up to %d runs, up to %d is approved once per session, from %d on is denied, the rest is asked every time)\n",
		t.AutoApprove, t.SessionApprove, t.AlwaysAsk, t.Block, t.AutoApprove, t.SessionApprove, t.Block)
	for _, g := range []struct {
		name  string
		rules []listedRule
	}{{"allow", l.Allow}, {"ask", l.Ask}, {"deny", l.Deny}, {"ask (from configurations that only tighten)", l.Tighter}} {
		fmt.Fprintf(w, "%s rules:", g.name)
		if len(g.rules) == 0 {
			fmt.Fprint(w, " none")
		}
		fmt.Fprintln(w)
		for _, r := range g.rules {
			fmt.Fprintf(w, "  %s\n", describeRule(r))
		}
	}
	switch s := l.Session; {
	case s == nil:
		fmt.Fprintln(w, "session: none (set FORGEBOX_SESSION or pass --session ID for session approvals)")
	default:
		fmt.Fprintf(w, "session %s (%s): %d approvals\n", s.ID, s.Store, len(s.Rules))
		for _, r := range s.Rules {
			fmt.Fprintf(w, "  %s\n", describeRule(r))
		}
	}
	for _, warning := range l.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warning)
	}
}

// describeRule renders a rule on one line: its pattern and what qualifies it.
func describeRule(r listedRule) string {
	var b strings.Builder
	if r.Command != "" {
		fmt.Fprintf(&b, "command %q", r.Command)
	} else {
		fmt.Fprintf(&b, "%q", r.Pattern)
	}
	var notes []string
	if r.Scope != policy.Once {
		notes = append(notes, r.Scope.String())
	}
	if r.Risk != nil {
		notes = append(notes, fmt.Sprintf("risk %d", *r.Risk))
	}
	if r.Reason != "" {
		notes = append(notes, r.Reason)
	}
	if r.Added != "" {
		notes = append(notes, "approved "+r.Added)
	}
	if r.Source != "" {
		notes = append(notes, "from "+r.Source)
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, "; ") + ")")
	}
	return b.String()
}

func (e env) policyExplain(args []string) int {
	var (
		o    policyOpts
		line string
	)
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	o.register(fs, true)
	o.registerSandbox(fs)
	fs.StringVar(&line, "c", "", "explain the command `LINE`")
	if code, ok := e.parseFlags(fs, args); !ok {
		return code
	}
	t, err := parseTarget(line, args, fs.Args(), true)
	if err != nil {
		e.errorf("policy explain: %v", err)
		return exitForgebox
	}
	js, code := e.loadJudge(o)
	if js == nil {
		return code
	}
	writeExplanation(e.stdout, t, explained{d: js.Decide(t.line, t.argv), session: js.SessionID, files: js.Files})
	return 0
}

func (e env) policyApprove(args []string) int {
	var (
		o      policyOpts
		line   string
		always bool
	)
	fs := flag.NewFlagSet("approve", flag.ContinueOnError)
	o.register(fs, true)
	o.registerSandbox(fs)
	fs.StringVar(&line, "c", "", "approve the command `LINE`")
	fs.BoolVar(&always, "always", false, "approve for good: add allow rules to your configuration file")
	if code, ok := e.parseFlags(fs, args); !ok {
		return code
	}
	t, err := parseTarget(line, args, fs.Args(), false)
	if err != nil {
		e.errorf("policy approve: %v", err)
		return exitForgebox
	}
	if always && o.Session != "" {
		e.errorf("policy approve: give --session ID or --always, not both")
		return exitForgebox
	}
	js, code := e.loadJudge(o)
	if js == nil {
		return code
	}
	d := js.Decide(t.line, t.argv)
	what := truncate(t.display(), 200)
	switch {
	case d.Next(false) == policy.Proceed:
		fmt.Fprintf(e.stdout, "nothing to approve: %s is allowed\n", what)
		return 0
	case d.Next(false) == policy.Refuse:
		e.errorf("policy approve: %s is denied, and no approval changes that: %s; %s", what, strings.Join(d.Reasons, "; "), denyHint(d))
		return exitNotExecutable
	}
	scope := policy.Session
	if always {
		scope = policy.Always
	}
	if !d.Approvable(scope) {
		e.errorf("policy approve: %s cannot be approved %s: it offers %s (level %s is %s); approve it once with forgebox run --yes",
			what, scopeWords(scope), joinScopes(d.Scopes), d.Level, levelMeaning(d.Level))
		return exitForgebox
	}
	rules, err := js.Approve(d, scope, time.Now())
	switch {
	case err != nil && always:
		e.errorf("policy approve: cannot record the approval for good: %v", err)
		return exitForgebox
	case err != nil:
		e.errorf("policy approve: %v", err)
		return exitForgebox
	case always:
		fmt.Fprintf(e.stdout, "approved for good in %s:\n", js.UserConfig)
	default:
		fmt.Fprintf(e.stdout, "approved for session %s:\n", js.SessionID)
	}
	for _, r := range rules {
		fmt.Fprintf(e.stdout, "  %s\n", describeRule(listedRule{Rule: r}))
	}
	return 0
}

func scopeWords(s policy.Scope) string {
	if s == policy.Session {
		return "for a session"
	}
	return "for good"
}

func (e env) policyRevoke(args []string) int {
	var (
		o   policyOpts
		all bool
	)
	fs := flag.NewFlagSet("revoke", flag.ContinueOnError)
	o.register(fs, true)
	fs.BoolVar(&all, "all", false, "remove every approval (of the session, with --session)")
	if code, ok := e.parseFlags(fs, args); !ok {
		return code
	}
	var pattern string
	switch {
	case all && fs.NArg() == 0:
	case !all && fs.NArg() == 1 && fs.Arg(0) != "":
		pattern = fs.Arg(0)
	default:
		e.errorf("policy revoke: give --all or one PATTERN (the approved command as policy list shows it)")
		return exitForgebox
	}
	drop := func(r policy.Rule) bool { return all || r.Text() == pattern }
	h, err := runner.CurrentHost()
	var (
		removed []policy.Rule
		where   string
	)
	if err == nil {
		removed, where, err = runner.Revoke(h, o.PolicyOptions, drop)
	}
	if err != nil {
		e.errorf("policy revoke: %v", err)
		return exitForgebox
	}
	if len(removed) == 0 {
		e.errorf("policy revoke: no approval to remove in %s (forgebox policy list shows them)", where)
		return exitNothing
	}
	fmt.Fprintf(e.stdout, "revoked in %s:\n", where)
	for _, r := range removed {
		fmt.Fprintf(e.stdout, "  %s\n", describeRule(listedRule{Rule: r}))
	}
	return 0
}
