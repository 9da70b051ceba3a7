package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/forgebox/forgebox/sandbox"
	"github.com/forgebox/forgebox/undo"
)

// doctorReport is the JSON of forgebox doctor: the host's report plus the
// fix for each missing piece.
type doctorReport struct {
	sandbox.Report
	Fixes   map[string]string `json:"fixes"`
	History historyHealth     `json:"history"`
	Caches  cacheReport       `json:"caches"`
	Undo    undo.Usage        `json:"undo"`
}

func (e env) doctor(args []string) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, "Usage:\n  forgebox doctor [--json]\n\nReports what this host supports: the sandbox's layers, the history, the caches.\n\nFlags:\n")
		fs.SetOutput(e.stderr)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		e.errorf("doctor: %v", err)
		return exitForgebox
	}
	r := sandbox.Diagnose(context.Background())
	r.SecretLocations = sandbox.SecretLocations()
	home, _ := os.UserHomeDir()
	r.Hidden = sandbox.HiddenSecrets(sandbox.Spec{Environ: os.Environ(), Home: home})
	if r.Hidden == nil {
		r.Hidden = []string{}
	}
	hist := checkHistory()
	cr, cerr := readCaches()
	ur, uerr := undo.StoreFor(stateDir(home)).Usage()
	fixes := map[string]string{}
	for _, c := range r.Checks {
		if !c.OK && c.Required {
			fixes[c.Name] = fixFor(c, r)
		}
	}
	if *jsonOut {
		e.printJSON(doctorReport{Report: r, Fixes: fixes, History: hist, Caches: cr, Undo: ur})
	} else {
		w := e.stdout
		fmt.Fprintf(w, "forgebox %s on %s %s, user %s", version, r.OS, r.Kernel, r.User)
		if r.Container != "" {
			fmt.Fprintf(w, ", inside a %s container", r.Container)
		}
		fmt.Fprintln(w)
		for _, c := range r.Checks {
			mark, note := "ok     ", ""
			switch {
			case !c.OK && c.Required:
				mark = "MISSING"
			case !c.OK:
				mark, note = "absent ", " (optional)"
			}
			fmt.Fprintf(w, "  %s %-16s %s%s\n", mark, c.Name, c.Detail, note)
			if fix := fixes[c.Name]; fix != "" {
				fmt.Fprintf(w, "          fix: %s\n", fix)
			}
		}
		fmt.Fprintf(w, "  %s %-16s %s\n", hist.mark(), "history", hist.detail())
		fmt.Fprintf(w, "  %s %-16s %d credential locations in the table, %d present here (--json lists both)\n",
			"ok     ", "secrets", len(r.SecretLocations), len(r.Hidden))
		if cerr != nil {
			fmt.Fprintf(w, "  %s %-16s %v\n", "absent ", "caches", cerr)
		} else {
			fmt.Fprintf(w, "  %s %-16s %s of %s in %d workspaces (%s; forgebox cache list, clear, limit)\n", "ok     ", "caches",
				humanBytes(cr.TotalBytes), humanBytes(cr.LimitBytes), len(cr.Workspaces), cr.Root)
			for _, in := range cr.Workspaces {
				fmt.Fprintf(w, "          %9s  %s\n", humanBytes(in.Bytes), cmpStr(in.Workspace, in.Key))
			}
		}
		if uerr != nil || ur.Root == "" {
			fmt.Fprintf(w, "  %s %-16s %v\n", "absent ", "undo", cmp.Or(error(uerr), error(errors.New("no state directory"))))
		} else {
			fmt.Fprintf(w, "  %s %-16s %s in %d records of %s (%s, %d days; forgebox undo --list, --limit)\n", "ok     ", "undo",
				humanBytes(ur.Bytes), ur.Records, humanBytes(ur.Limits.MaxBytes), ur.Root, int(ur.Limits.MaxAge.Hours()/24))
		}
		if len(r.WillEnforce) > 0 {
			fmt.Fprintln(w, "forgebox run will enforce:")
			for _, s := range r.WillEnforce {
				fmt.Fprintf(w, "  - %s\n", s)
			}
		}
	}
	if c, ok := r.Find(sandbox.CheckSandbox); !ok || !c.OK {
		return 1
	}
	return 0
}
