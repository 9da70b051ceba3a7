package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/forgebox/forgebox/history"
	"github.com/forgebox/forgebox/policy"
	"github.com/forgebox/forgebox/runner"
)

// historyHealth is what forgebox doctor says of the history database. The
// history is never required: a problem here changes no exit status.
type historyHealth struct {
	Path string `json:"path"`
	// Enabled is false when the configuration turns recording off.
	Enabled bool `json:"enabled"`
	// Exists is false until the first run creates the database.
	Exists bool `json:"exists"`
	// OK: it opens and passes SQLite's integrity check.
	OK       bool     `json:"ok"`
	Runs     int64    `json:"runs"`
	Problem  string   `json:"problem,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// doctorHistoryTimeout bounds the check, a full read of the database.
const doctorHistoryTimeout = 60 * time.Second

// checkHistory opens the history database (without creating it), runs the
// integrity check and counts the runs.
func checkHistory() historyHealth {
	h := historyHealth{Enabled: true}
	settings, err := historySettings()
	switch {
	case err != nil:
		h.Warnings = append(h.Warnings, fmt.Sprintf("read the configuration: %v", err))
	case settings.Enabled != nil && !*settings.Enabled:
		h.Enabled = false
	}
	path, err := runner.HistoryPath("")
	if err != nil {
		h.Problem = err.Error()
		return h
	}
	h.Path = path
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return h
	} else if err != nil {
		h.Problem = err.Error()
		return h
	}
	h.Exists = true
	ctx, cancel := context.WithTimeout(context.Background(), doctorHistoryTimeout)
	defer cancel()
	st, warnings, err := history.Open(ctx, path, runner.StoreOptions(nil))
	h.Warnings = append(h.Warnings, warnings...)
	if err != nil {
		h.Problem = err.Error()
		return h
	}
	defer st.Close()
	if err := st.Check(ctx); err != nil {
		h.Problem = err.Error()
		return h
	}
	s, err := st.Stats(ctx, history.Filter{})
	if err != nil {
		h.Problem = err.Error()
		return h
	}
	h.OK, h.Runs = true, s.Total
	return h
}

func (h historyHealth) mark() string {
	switch {
	case h.Problem != "":
		return "PROBLEM"
	case !h.Exists:
		return "absent "
	}
	return "ok     "
}

func (h historyHealth) detail() string {
	var s string
	switch {
	case h.Problem != "":
		s = h.Problem + "; forgebox run warns and runs commands unrecorded (move the file aside to start a new history)"
	case !h.Exists:
		s = h.Path + ": no database yet (the first run creates it)"
	default:
		s = fmt.Sprintf("%s: %d runs, integrity check passed", h.Path, h.Runs)
	}
	if !h.Enabled {
		s += "; recording is off in the configuration"
	}
	if len(h.Warnings) > 0 {
		s += "; " + strings.Join(h.Warnings, "; ")
	}
	return s + " (optional)"
}

// historySettings are the history settings of the configuration forgebox
// run would judge with here.
func historySettings() (policy.History, error) {
	h, err := runner.CurrentHost()
	if err != nil {
		return policy.History{}, err
	}
	s, _, err := runner.HistorySettings(h, runner.PolicyOptions{})
	return s, err
}
