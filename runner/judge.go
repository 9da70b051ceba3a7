package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/forgebox/forgebox/pathtree"
	"github.com/forgebox/forgebox/policy"
)

// PolicyOptions choose what a command is judged against.
type PolicyOptions struct {
	File      string // --policy: the user's configuration, instead of the XDG one
	Workspace string // --workspace
	Session   string // --session, else $FORGEBOX_SESSION
	// Sandbox is what the command's sandbox lets it reach (Containment);
	// the zero value judges it as nothing contained it.
	Sandbox policy.Containment
}

// Host is what the loading reads of the process's surroundings, passed
// explicitly so that tests can stand in for it.
type Host struct {
	Getenv func(string) string
	Cwd    string
	Home   string
}

func CurrentHost() (Host, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return Host{}, fmt.Errorf("tell the current directory: %w", err)
	}
	home, _ := os.UserHomeDir()
	return Host{Getenv: os.Getenv, Cwd: cwd, Home: home}, nil
}

// xdg returns an XDG base directory: $env when it is absolute (the
// specification says to ignore a relative one), else ~/fallback.
func (h Host) xdg(env, fallback string) (string, error) {
	if d := h.Getenv(env); filepath.IsAbs(d) {
		return filepath.Clean(d), nil
	}
	if h.Home == "" {
		return "", fmt.Errorf("find $%s: it is unset and so is $HOME", env)
	}
	return filepath.Join(h.Home, fallback), nil
}

// userConfigPath is the user's configuration file.
func (h Host) userConfigPath() (string, error) {
	dir, err := h.xdg("XDG_CONFIG_HOME", ".config")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "forgebox", "config.json"), nil
}

// sessionDir holds the session approval stores.
func (h Host) sessionDir() (string, error) {
	dir, err := h.xdg("XDG_STATE_HOME", filepath.Join(".local", "state"))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "forgebox", "sessions"), nil
}

// ConfigFile is one configuration file the policy was read from.
type ConfigFile struct {
	Path string `json:"path"`
	// Role is user, workspace, or user_in_workspace (a user configuration
	// that lies in the workspace and so only tightens).
	Role string `json:"role"`
}

// Judge is everything judging a command needs, read from the host.
type Judge struct {
	Engine *policy.Engine
	Ctx    *policy.Context
	Files  []ConfigFile
	// userConfig is the file "always" approvals are written to; noAlways
	// says why they may not be, when they may not.
	UserConfig string
	NoAlways   string
	SessionID  string
	// store is the session's approvals; nil without a session ID or when
	// it lies in the workspace (noStore says so).
	Store    *SessionStore
	NoStore  string
	Warnings []string
}

// loadJudge reads the configuration files and the session's approvals and
// builds the judge's context, for run, check and policy alike.
func LoadJudge(h Host, o PolicyOptions) (*Judge, error) {
	s := &Judge{}
	ctx, err := JudgeContext(h, o.Workspace)
	if err != nil {
		return nil, err
	}
	s.Ctx = ctx
	s.Ctx.Sandbox = o.Sandbox
	pol, err := s.loadUser(h, o.File)
	if err != nil {
		return nil, err
	}
	wsPath := filepath.Join(ctx.Workspace, ".forgebox", "config.json")
	data, err := ReadSmallFile(wsPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read the workspace configuration: %w", err)
	default:
		ws, err := ParseConfig(wsPath, data)
		if err != nil {
			return nil, err
		}
		var warnings []string
		pol, warnings = pol.Tighten(ws)
		s.Warnings = append(s.Warnings, warnings...)
		s.Files = append(s.Files, ConfigFile{Path: wsPath, Role: "workspace"})
	}
	s.Engine = policy.New(pol)
	if err := s.loadSession(h, o.Session); err != nil {
		return nil, err
	}
	return s, nil
}

// loadUser reads the user's configuration: --policy FILE, which must
// exist, or the XDG one, whose absence means the defaults.
func (s *Judge) loadUser(h Host, file string) (*policy.Policy, error) {
	real, err := userConfigFile(h, file)
	if err != nil {
		return nil, err
	}
	s.UserConfig = real
	inWorkspace := pathtree.Within(real, s.Ctx.Workspace)
	if inWorkspace {
		s.NoAlways = fmt.Sprintf("the configuration file %s is inside the workspace, where the command could rewrite it", real)
	}
	data, err := ReadSmallFile(real)
	if errors.Is(err, fs.ErrNotExist) && file == "" {
		return policy.Default(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the configuration: %w", err)
	}
	pol, err := ParseConfig(real, data)
	if err != nil {
		return nil, err
	}
	if !inWorkspace {
		s.Files = append(s.Files, ConfigFile{Path: real, Role: "user"})
		return pol, nil
	}
	// The agent can write the workspace: a file there may only tighten.
	s.Warnings = append(s.Warnings, fmt.Sprintf("%s is inside the workspace %s: it can only tighten the policy", real, s.Ctx.Workspace))
	s.Files = append(s.Files, ConfigFile{Path: real, Role: "user_in_workspace"})
	tight, warnings := policy.Default().Tighten(pol)
	s.Warnings = append(s.Warnings, warnings...)
	return tight, nil
}

// userConfigFile is the file "always" approvals are written to: --policy
// FILE or the XDG one, where it really is (renaming a new file over a
// symbolic link would replace the link).
func userConfigFile(h Host, file string) (string, error) {
	path := file
	if path == "" {
		p, err := h.userConfigPath()
		if err != nil {
			return "", err
		}
		path = p
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(h.Cwd, path)
	}
	return ResolvePath(path), nil
}

// loadSession finds the session's store and reads its approvals.
func (s *Judge) loadSession(h Host, id string) error {
	if id == "" {
		id = h.Getenv("FORGEBOX_SESSION")
	}
	if id == "" {
		return nil
	}
	if err := ValidSessionID(id); err != nil {
		return err
	}
	s.SessionID = id
	dir, err := h.sessionDir()
	if err != nil {
		return err
	}
	st := NewSessionStore(ResolvePath(dir), id)
	if pathtree.Within(st.path, s.Ctx.Workspace) {
		s.NoStore = fmt.Sprintf("the session store %s is inside the workspace, where the command could write approvals", st.path)
		s.Warnings = append(s.Warnings, s.NoStore+": its approvals are ignored")
		return nil
	}
	rules, err := st.Load()
	if err != nil {
		return err
	}
	s.Store = st
	s.Ctx.Session = rules
	return nil
}

// JudgeContext is what the judge knows of the place the command runs in,
// resolved the way forgebox run resolves it: the workspace absolute with
// its symbolic links resolved, the command starting in the current
// directory when that lies in the workspace, else in the workspace.
func JudgeContext(h Host, workspace string) (*policy.Context, error) {
	cwd := ResolvePath(h.Cwd)
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
	if h.Home != "" {
		ctx.Home = ResolvePath(h.Home)
	}
	temps := []string{"/tmp", "/var/tmp"}
	if t := h.Getenv("TMPDIR"); filepath.IsAbs(t) {
		temps = append(temps, filepath.Clean(t))
	}
	for _, t := range temps {
		ctx.TempDirs = appendNew(ctx.TempDirs, t)
		// On some systems /tmp is a link (/private/tmp on macOS): the
		// command may name either.
		ctx.TempDirs = appendNew(ctx.TempDirs, ResolvePath(t))
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

// ResolvePath resolves the symbolic links of the longest part of p that
// exists: a file that is yet to be written is judged by where it will be.
func ResolvePath(p string) string {
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

// ReadSmallFile reads a configuration or approval file that someone else
// may have planted: a symbolic link in its place, a FIFO (which would block
// the open) or a device (/dev/zero, which never ends) is refused, and so is
// anything over policy.MaxConfigBytes. The file is checked before it is
// opened, opened without blocking, and checked again through the open
// descriptor, so that swapping it in between is noticed.
func ReadSmallFile(path string) ([]byte, error) {
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
