package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/forgebox/forgebox/caches"
)

// cacheReport is the private caches, for forgebox cache list and doctor.
type cacheReport struct {
	Root       string        `json:"root"`
	LimitBytes int64         `json:"limit_bytes"`
	TotalBytes int64         `json:"total_bytes"`
	Workspaces []caches.Info `json:"workspaces"`
}

func readCaches() (cacheReport, error) {
	home, _ := os.UserHomeDir()
	root := caches.Root(stateDir(home))
	if root == "" {
		return cacheReport{Workspaces: []caches.Info{}}, errors.New("no state directory: set HOME or XDG_STATE_HOME")
	}
	list, err := caches.List(root)
	r := cacheReport{Root: root, LimitBytes: caches.Limit(root), Workspaces: list}
	slices.SortFunc(r.Workspaces, func(a, b caches.Info) int { return b.LastUsed.Compare(a.LastUsed) })
	for _, in := range list {
		r.TotalBytes += in.Bytes
	}
	return r, err
}

func (r cacheReport) render(w io.Writer, indent string) {
	fmt.Fprintf(w, "%sprivate caches in %s: %s of %s\n", indent, r.Root, humanBytes(r.TotalBytes), humanBytes(r.LimitBytes))
	for _, in := range r.Workspaces {
		fmt.Fprintf(w, "%s  %9s  used %s  %s\n", indent, humanBytes(in.Bytes), in.LastUsed.Format(time.DateTime), cmpStr(in.Workspace, in.Key))
	}
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

const cacheUsage = `Usage:
  forgebox cache list [--json]                  the private caches, per workspace, with their sizes
  forgebox cache clear [--all | --workspace DIR]
                                                remove a workspace's private caches (default: this directory's)
  forgebox cache limit [SIZE]                   show or set the bound for all workspaces together (default 5GiB)

A sandboxed command reads the host's package caches (~/.cache, Go's module
cache, ~/.npm, Cargo's, Maven's, Gradle's ...) but writes into caches private
to forgebox and the workspace; forgebox run --no-cache turns them off.
`

func (e env) cacheCmd(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, cacheUsage)
		return exitForgebox
	}
	fs := flag.NewFlagSet("cache "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	jsonOut := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "every workspace's caches")
	ws := fs.String("workspace", "", "the workspace whose caches to clear")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stderr, cacheUsage)
			return 0
		}
		e.errorf("cache %s: %v", args[0], err)
		return exitForgebox
	}
	r, err := readCaches()
	if err != nil {
		e.errorf("cache: %v", err)
		return exitForgebox
	}
	switch args[0] {
	case "list":
		if *jsonOut {
			e.printJSON(r)
		} else {
			r.render(e.stdout, "")
		}
		return 0
	case "clear":
		return e.cacheClear(r, *all, *ws, fs.Args())
	case "limit":
		if fs.NArg() == 0 {
			fmt.Fprintln(e.stdout, humanBytes(r.LimitBytes))
			return 0
		}
		n, err := parseSize(fs.Arg(0))
		if err == nil {
			err = caches.SetLimit(r.Root, n)
		}
		if err != nil {
			e.errorf("cache limit: %v", err)
			return exitForgebox
		}
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(e.stdout, cacheUsage)
		return 0
	}
	e.errorf("cache: unknown verb %q", args[0])
	fmt.Fprint(e.stderr, cacheUsage)
	return exitForgebox
}

func (e env) cacheClear(r cacheReport, all bool, ws string, rest []string) int {
	if len(rest) > 0 || (all && ws != "") {
		e.errorf("cache clear: want --all, --workspace DIR or nothing (this directory)")
		return exitForgebox
	}
	if all {
		busy, err := caches.ClearAll(r.Root)
		if err != nil {
			e.errorf("cache clear: %v", err)
			return exitForgebox
		}
		for _, b := range busy {
			e.errorf("cache clear: %s is in use by a run: left as it is", b)
		}
		if len(busy) > 0 {
			return 1
		}
		return 0
	}
	if ws == "" {
		ws, _ = os.Getwd()
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		e.errorf("cache clear: %v", err)
		return exitForgebox
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	key := caches.Key(abs)
	for _, in := range r.Workspaces {
		if in.Workspace == abs {
			key = in.Key
		}
	}
	err = caches.Workspace{Root: r.Root, Key: key}.Clear()
	if errors.Is(err, caches.ErrBusy) {
		e.errorf("cache clear: the caches of %s are in use by a run: try again when it ends", abs)
		return 1
	}
	if err != nil {
		e.errorf("cache clear: %v", err)
		return exitForgebox
	}
	return 0
}
