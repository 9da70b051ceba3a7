package main

import (
	"os"

	"github.com/forgebox/forgebox/runner"
)

// ownPaths are forgebox's own locations for a run or server with these
// flags.
func (f *runFlags) ownPaths() []string {
	h, err := runner.CurrentHost()
	if err != nil {
		// No current directory: the absolute locations still count.
		home, _ := os.UserHomeDir()
		h = runner.Host{Getenv: os.Getenv, Home: home}
	}
	return runner.OwnPaths(h, f.pol.File, f.historyDB)
}
