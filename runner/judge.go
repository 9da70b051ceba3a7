package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/policy"
)

// policyOpts are the flags that choose what a command is judged against.
type policyOpts struct {
	file      string // --policy: the user's configuration, instead of the XDG one
	workspace string // --workspace
	session   string // --session, else $FORGEBOX_SESSION
}

// register declares --policy and --session, and --workspace when the
// command has no --workspace of its own.
func (o *policyOpts) register(fs *flag.FlagSet, workspace bool) {
	fs.StringVar(&o.file, "policy", "", "judge with the configuration `FILE` instead of ~/.config/forgebox/config.json")
	fs.StringVar(&o.session, "session", "", "the session `ID` whose approvals apply (default: $FORGEBOX_SESSION)")
	if workspace {
		fs.StringVar(&o.workspace, "workspace", "", "judge as if the project `DIR` were the workspace (default: the current directory)")
	}
}

// host is what the loading reads of the process's surroundings, passed
// explicitly so that tests can stand in for it.
type host struct {
	getenv func(string) string
	cwd    string
	home   string
}

func currentHost() (host, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return host{}, fmt.Errorf("tell the current directory: %w", err)
	}
	home, _ := os.UserHomeDir()
	return host{getenv: os.Getenv, cwd: cwd, home: home}, nil
}

// xdg returns an XDG base directory: $env when it is absolute (the
// specification says to ignore a relative one), else ~/fallback.
func (h host) xdg(env, fallback string) (string, error) {
	if d := h.getenv(env); filepath.IsAbs(d) {
		return filepath.Clean(d), nil
	}
	if h.home == "" {
		return "", fmt.Errorf("find $%s: it is unset and so is $HOME", env)
	}
	return filepath.Join(h.home, fallback), nil
}

// userConfigPath is the user's configuration file.
func (h host) userConfigPath() (string, error) {
	dir, err := h.xdg("XDG_CONFIG_HOME", ".config")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "forgebox", "config.json"), nil
}

// sessionDir holds the session approval stores.
func (h host) sessionDir() (string, error) {
	dir, err := h.xdg("XDG_STATE_HOME", filepath.Join(".local", "state"))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "forgebox", "sessions"), nil
}

// configFile is one configuration file the policy was read from.
type configFile struct {
	Path string `json:"path"`
	// Role is user, workspace, or user_in_workspace (a user configuration
	// that lies in the workspace and so only tightens).
	Role string `json:"role"`
}

// judgeSetup is everything judging a command needs, read from the host.
type judgeSetup struct {
	engine *policy.Engine
	ctx    *policy.Context
	files  []configFile
	// userConfig is the file "always" approvals are written to; noAlways
	// says why they may not be, when they may not.
	userConfig string
	noAlways   string
	sessionID  string
	// store is the session's approvals; nil without a session ID or when
	// it lies in the workspace (noStore says so).
	store    *sessionStore
	noStore  string
	warnings []string
}

// loadJudge reads the configuration files and the session's approvals and
// builds the judge's context, for run, check and policy alike.
func loadJudge(h host, o policyOpts) (*judgeSetup, error) {
	s := &judgeSetup{}
	ctx, err := judgeContext(h, o.workspace)
	if err != nil {
		return nil, err
	}
	s.ctx = ctx
	pol, err := s.loadUser(h, o.file)
	if err != nil {
		return nil, err
	}
	wsPath := filepath.Join(ctx.Workspace, ".forgebox", "config.json")
	data, err := readSmallFile(wsPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read the workspace configuration: %w", err)
	default:
		ws, err := parseConfig(wsPath, data)
		if err != nil {
			return nil, err
		}
		var warnings []string
		pol, warnings = pol.Tighten(ws)
		s.warnings = append(s.warnings, warnings...)
		s.files = append(s.files, configFile{Path: wsPath, Role: "workspace"})
	}
	s.engine = policy.New(pol)
	if err := s.loadSession(h, o.session); err != nil {
		return nil, err
	}
	return s, nil
}

// loadUser reads the user's configuration: --policy FILE, which must
// exist, or the XDG one, whose absence means the defaults.
func (s *judgeSetup) loadUser(h host, file string) (*policy.Policy, error) {
	real, err := userConfigFile(h, file)
	if err != nil {
		return nil, err
	}
	s.userConfig = real
	inWorkspace := pathtree.Within(real, s.ctx.Workspace)
	if inWorkspace {
		s.noAlways = fmt.Sprintf("the configuration file %s is inside the workspace, where the command could rewrite it", real)
	}
	data, err := readSmallFile(real)
	if errors.Is(err, fs.ErrNotExist) && file == "" {
		return policy.Default(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the configuration: %w", err)
	}
	pol, err := parseConfig(real, data)
	if err != nil {
		return nil, err
	}
	if !inWorkspace {
		s.files = append(s.files, configFile{Path: real, Role: "user"})
		return pol, nil
	}
	// The agent can write the workspace: a file there may only tighten.
	s.warnings = append(s.warnings, fmt.Sprintf("%s is inside the workspace %s: it can only tighten the policy", real, s.ctx.Workspace))
	s.files = append(s.files, configFile{Path: real, Role: "user_in_workspace"})
	tight, warnings := policy.Default().Tighten(pol)
	s.warnings = append(s.warnings, warnings...)
	return tight, nil
}

// userConfigFile is the file "always" approvals are written to: --policy
// FILE or the XDG one, where it really is (renaming a new file over a
// symbolic link would replace the link).
func userConfigFile(h host, file string) (string, error) {
	path := file
	if path == "" {
		p, err := h.userConfigPath()
		if err != nil {
			return "", err
		}
		path = p
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(h.cwd, path)
	}
	return resolvePath(path), nil
}

// loadSession finds the session's store and reads its approvals.
func (s *judgeSetup) loadSession(h host, id string) error {
	if id == "" {
		id = h.getenv("FORGEBOX_SESSION")
	}
	if id == "" {
		return nil
	}
	if err := validSessionID(id); err != nil {
		return err
	}
	s.sessionID = id
	dir, err := h.sessionDir()
	if err != nil {
		return err
	}
	st := newSessionStore(resolvePath(dir), id)
	if pathtree.Within(st.path, s.ctx.Workspace) {
		s.noStore = fmt.Sprintf("the session store %s is inside the workspace, where the command could write approvals", st.path)
		s.warnings = append(s.warnings, s.noStore+": its approvals are ignored")
		return nil
	}
	rules, err := st.load()
	if err != nil {
		return err
	}
	s.store = st
	s.ctx.Session = rules
	return nil
}

// judgeContext is what the judge knows of the place the command runs in,
// resolved the way forgebox run resolves it: the workspace absolute with
// its symbolic links resolved, the command starting in the current
// directory when that lies in the workspace, else in the workspace.
func judgeContext(h host, workspace string) (*policy.Context, error) {
	cwd := resolvePath(h.cwd)
	ws := workspace
	if ws == "" {
		ws = cwd
	} else if !filepath.IsAbs(ws) {
		ws = filepath.Join(cwd, ws)
	}
	real, err := filepath.EvalSymlinks(ws)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("workspace %s does not exist", ws)
	}
	if err != nil {
		return nil, fmt.Errorf("resolve the workspace %s: %w", ws, err)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory", ws)
	}
	ctx := &policy.Context{Workspace: real, Cwd: real}
	if pathtree.Within(cwd, real) {
		ctx.Cwd = cwd
	}
	if h.home != "" {
		ctx.Home = resolvePath(h.home)
	}
	temps := []string{"/tmp", "/var/tmp"}
	if t := h.getenv("TMPDIR"); filepath.IsAbs(t) {
		temps = append(temps, filepath.Clean(t))
	}
	for _, t := range temps {
		ctx.TempDirs = appendNew(ctx.TempDirs, t)
		// On some systems /tmp is a link (/private/tmp on macOS): the
		// command may name either.
		ctx.TempDirs = appendNew(ctx.TempDirs, resolvePath(t))
	}
	return ctx, nil
}

func appendNew(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}

// resolvePath resolves the symbolic links of the longest part of p that
// exists: a file that is yet to be written is judged by where it will be.
func resolvePath(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...)
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// readSmallFile reads a configuration or approval file that someone else
// may have planted: a symbolic link in its place, a FIFO (which would block
// the open) or a device (/dev/zero, which never ends) is refused, and so is
// anything over policy.MaxConfigBytes. The file is checked before it is
// opened, opened without blocking, and checked again through the open
// descriptor, so that swapping it in between is noticed.
func readSmallFile(path string) ([]byte, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := smallRegular(path, before); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	after, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := smallRegular(path, after); err != nil {
		return nil, err
	}
	if !os.SameFile(before, after) {
		return nil, fmt.Errorf("read %s: the file was replaced while it was opened", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, policy.MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > policy.MaxConfigBytes {
		return nil, fmt.Errorf("read %s: it is larger than %d bytes", path, policy.MaxConfigBytes)
	}
	return data, nil
}

func smallRegular(path string, fi os.FileInfo) error {
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		return fmt.Errorf("read %s: it is a symbolic link, which forgebox does not follow here", path)
	case !m.IsRegular():
		return fmt.Errorf("read %s: it is not a regular file (%v)", path, m.Type())
	case fi.Size() > policy.MaxConfigBytes:
		return fmt.Errorf("read %s: it is larger than %d bytes", path, policy.MaxConfigBytes)
	}
	return nil
}
