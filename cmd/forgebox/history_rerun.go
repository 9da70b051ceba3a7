package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/forgebox/forgebox/shellquote"
)

// pathFlags are the flags of forgebox run that name paths: a rerun from
// another directory must find the same ones.
var pathFlags = []string{"workspace", "rw", "ro", "hide", "policy", "history-db"}

// recordedArgs are the arguments of forgebox run as the history keeps them
// for a rerun: as given, with relative paths made absolute against dir.
// Parsing already succeeded, so the flags are well formed.
func recordedArgs(fs *flag.FlagSet, args []string, dir string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			break
		}
		body := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		name, val, inline := strings.Cut(body, "=")
		fl := fs.Lookup(name)
		if fl == nil {
			break
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		at := i
		if !inline {
			if i++; i >= len(out) {
				break
			}
			at, val = i, out[i]
		}
		if !slices.Contains(pathFlags, name) || val == "" || filepath.IsAbs(val) {
			continue
		}
		abs := filepath.Join(dir, val)
		if inline {
			out[at] = a[:len(a)-len(val)] + abs
		} else {
			out[at] = abs
		}
	}
	return out
}

// rerunArgs are the recorded arguments without what would let the rerun
// skip the judge: a recorded --yes approved the command once, then; a
// recorded --no-policy trusted a harness that judged it then.
func rerunArgs(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return append(out, args[i:]...)
		}
		switch strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-") {
		case "yes", "yes=true", "no-policy", "no-policy=true":
			continue
		}
		out = append(out, a)
	}
	return out
}

func (e env) historyRerun(args []string) int {
	var db string
	fs := historyFlagSet("rerun")
	fs.StringVar(&db, "history-db", "", "the history database `PATH` (the rerun is recorded there too)")
	yes := fs.Bool("yes", false, "approve the command once if the judge asks about it (never a denied one)")
	pos, code, done := e.parseHistoryFlags(fs, args)
	if done {
		return code
	}
	r, path, code := e.getRun(db, pos, "rerun")
	if r == nil {
		return code
	}
	if len(r.Args) == 0 {
		e.errorf("history rerun: run %d has no recorded arguments of forgebox run (it was recorded by another client); nothing to rerun", r.ID)
		return exitForgebox
	}
	if err := os.Chdir(r.Cwd); err != nil {
		e.errorf("history rerun: run %d started in %s: %v", r.ID, r.Cwd, err)
		return exitForgebox
	}
	run := rerunArgs(r.Args)
	// The rerun is recorded where the run was found, unless its own
	// arguments name a database.
	run = append([]string{"--history-db", path}, run...)
	if *yes {
		run = append([]string{"--yes"}, run...)
	}
	e.errorf("rerun of run %d in %s: forgebox run %s", r.ID, r.Cwd, shellquote.Join(r.Args))
	return e.run(run)
}
