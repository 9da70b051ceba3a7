package policy

import (
	"path"
	"strings"

	"github.com/forgebox/forgebox/pathtree"
	"mvdan.cc/sh/v3/syntax"
)

// cacheFree are the readers of toolKnowledge whose work depends only on
// their operands and standard input: they open no package cache (~/.cache,
// a module cache, ~/.npm) and read none of the variables the private
// caches set (GOMODCACHE, npm_config_cache, ...). Other readers are left
// out on purpose: bat and tldr keep caches of their own, the linters and
// code counters may, printenv and ps print the variables, df and findmnt
// the mounts.
var cacheFree = map[string]bool{
	"ls": true, "dir": true, "vdir": true, "cat": true, "head": true, "tail": true, "grep": true, "egrep": true,
	"fgrep": true, "wc": true, "cut": true, "tr": true, "pwd": true, "diff": true, "diff3": true, "sdiff": true,
	"cmp": true, "basename": true, "dirname": true, "realpath": true, "readlink": true, "stat": true, "du": true,
	"seq": true, "od": true, "hexdump": true, "md5sum": true, "sha1sum": true, "sha224sum": true,
	"sha256sum": true, "sha384sum": true, "sha512sum": true, "b2sum": true, "cksum": true, "sum": true,
	"nl": true, "tac": true, "rev": true, "comm": true, "join": true, "paste": true, "fold": true,
	"column": true, "strings": true, "base64": true, "base32": true, "basenc": true, "expand": true,
	"unexpand": true, "fmt": true, "pr": true, "tsort": true, "numfmt": true, "factor": true, "expr": true,
	"echo": true, "printf": true, "true": true, "false": true, "test": true, "[": true, "sleep": true,
	"sort": true, "uniq": true, "tree": true, "xxd": true, "file": true,
}

// cacheFreeCommand reports whether c, found behind inner's wrappers, runs
// one of the cacheFree readers as written (no wrapper, no nesting, no
// variable set before it, not a function of the line, the program by its
// name or from a system directory) on static words that name the
// workspace or a device only: its options, operands and redirections.
// Such a command cannot tell whether the private caches are mounted.
// The judge's risk and category are checked by Decision.CacheFree.
func (j *judge) cacheFreeCommand(c, inner *Command) bool {
	if inner == nil || c.Depth > 0 || len(c.Wrappers) > 0 || len(c.Assigns) > 0 || inner.Function ||
		!cacheFree[inner.Name] || len(inner.Args) == 0 || j.ctx.lost {
		return false
	}
	// A reader without operands reads where it stands (du, grep -r).
	if !j.cacheFreePlace(Arg{Value: ".", Static: true}) {
		return false
	}
	prog := inner.Args[0]
	if !prog.Static || prog.Glob {
		return false
	}
	if strings.Contains(prog.Value, "/") {
		if p := j.place(prog); p != PlaceSystem && p != PlaceSystemRoot {
			return false
		}
	}
	for _, a := range inner.Args[1:] {
		if !a.Static {
			return false
		}
		if strings.HasPrefix(a.Value, "-") {
			// An option's value may be a path (--file=~/.cache/x, -f/x).
			if strings.ContainsAny(a.Value, "/~") {
				return false
			}
			continue
		}
		if !j.cacheFreePlace(a) {
			return false
		}
	}
	for _, r := range c.Redirs {
		if !r.Target.Static {
			return false
		}
		if (r.Op == ">&" || r.Op == "<&") && isFd(r.Target.Value) {
			continue
		}
		if !j.cacheFreePlace(r.Target) {
			return false
		}
	}
	return true
}

// cacheFreePlace: a word that points into the workspace, or a device
// (/dev/null). The private caches never lie inside a writable root. It is
// Context.Place cut down to the question, for speed (the judge asks it of
// every word of every reader): a word inside the workspace, startup
// files, hooks and .git included, counts, since none is a cache.
func (j *judge) cacheFreePlace(a Arg) bool {
	ctx := j.ctx
	v := a.Value
	switch {
	case a.Glob:
		p := j.place(a)
		return p == PlaceWorkspace || p == PlaceWorkspaceRoot || p == PlaceGitDir || p == PlaceDevice
	case v == "" || strings.HasPrefix(v, "~"):
		return false
	case strings.HasPrefix(v, "/dev/") || strings.HasPrefix(v, "/proc/self/fd/"):
		return devicePlace(path.Clean(v)) == PlaceDevice
	}
	ws := ctx.Workspace
	return ws != "" && ws != "/" && ws != ctx.Home && pathtree.Within(ctx.Abs(v), ws)
}

// CacheFree reports whether no command of the line can tell the run's
// private package caches from none: every command is a reader the judge
// knows (cacheFree) and scores R0, run as written where it stands in the
// workspace, on words that name only the workspace or a device (a
// redirection into the workspace is a write the judge scores R0 too). Such a line neither reads nor
// writes a package cache, so a sandbox may leave the caches out; leaving
// them out only takes away (the host's caches are then read-only, as the
// rest of the home). Anything else — an unknown program, a script, an
// interpreter, a build tool, a package manager, sh -c, eval, xargs, env,
// a path outside the workspace, a variable — is not cache-free.
func (d *Decision) CacheFree() bool {
	if len(d.Commands) == 0 || d.shaped {
		return false
	}
	for _, j := range d.Commands {
		if !j.cacheFree || j.Level != R0 || j.Category > SafeWrite || j.Action == Deny || j.Interactive {
			return false
		}
	}
	return true
}

// plainSyntax reports whether shell code is only simple commands joined by
// lists, pipes, ifs, whiles, groups and subshells, on literal words: no
// [[ ]] test, arithmetic, for, select or case word list, declaration,
// function, coprocess or expansion. The judge sees the commands of a line,
// not those constructs, and [[ -f ~/.cache/x ]] reads a cache all the same.
func plainSyntax(f *syntax.File) bool {
	plain := true
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n.(type) {
		case nil, *syntax.File, *syntax.Stmt, *syntax.CallExpr, *syntax.BinaryCmd, *syntax.Word, *syntax.Lit,
			*syntax.SglQuoted, *syntax.DblQuoted, *syntax.Redirect, *syntax.Comment, *syntax.Subshell,
			*syntax.Block, *syntax.IfClause, *syntax.WhileClause, *syntax.TimeClause:
			return plain
		}
		plain = false
		return false
	})
	return plain
}
