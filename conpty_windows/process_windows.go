package conpty

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// ProcAttr describes a process to start.
type ProcAttr struct {
	// Token runs the process as that token (CreateProcessAsUser); zero
	// runs it with the caller's (CreateProcess).
	Token windows.Token
	// Job receives the process before it runs a single instruction.
	Job *Job
	// App is the program's full path (lpApplicationName: no search, no
	// guessing at where the name ends); CmdLine is its command line, as
	// the program parses it.
	App, CmdLine string
	// Env holds NAME=VALUE entries; Dir is the working directory.
	Env []string
	Dir string
	// Stdin, Stdout and Stderr are the standard handles, inherited alone
	// (PROC_THREAD_ATTRIBUTE_HANDLE_LIST). Ignored with PTY.
	Stdin, Stdout, Stderr windows.Handle
	// PTY attaches the process to a pseudo console instead; it inherits
	// no handle at all.
	PTY *PTY
	// NoWindow gives a console program a console of its own without a
	// window (CREATE_NO_WINDOW), instead of the caller's console: the
	// command can never write to, read from or push input into the
	// caller's console.
	NoWindow bool
}

// Process is a started process.
type Process struct {
	Handle windows.Handle
	Pid    uint32
}

// Start creates the process suspended, assigns it to the job, and only
// then resumes it: no code of the command runs, and no child of it starts,
// outside the job. A failure after creation terminates the process.
func Start(a ProcAttr) (*Process, error) {
	if a.Job == nil {
		return nil, errors.New("start a process: no job")
	}
	app, err := windows.UTF16PtrFromString(a.App)
	if err != nil {
		return nil, fmt.Errorf("program %q: %w", a.App, err)
	}
	cmdline, err := windows.UTF16PtrFromString(a.CmdLine)
	if err != nil {
		return nil, fmt.Errorf("command line: %w", err)
	}
	var dir *uint16
	if a.Dir != "" {
		if dir, err = windows.UTF16PtrFromString(a.Dir); err != nil {
			return nil, fmt.Errorf("directory %q: %w", a.Dir, err)
		}
	}
	block, err := EnvBlock(a.Env)
	if err != nil {
		return nil, err
	}
	env := &block[0]

	attrs, err := windows.NewProcThreadAttributeList(1)
	if err != nil {
		return nil, fmt.Errorf("attribute list: %w", err)
	}
	defer attrs.Delete()
	si := &windows.StartupInfoEx{}
	si.Cb = uint32(unsafe.Sizeof(*si))
	// Set even with a PTY and no handles: a child of a caller whose
	// standard handles are redirected would otherwise get copies of their
	// values, not the pseudo console's.
	si.Flags = windows.STARTF_USESTDHANDLES
	flags := uint32(windows.CREATE_SUSPENDED | windows.CREATE_UNICODE_ENVIRONMENT | windows.EXTENDED_STARTUPINFO_PRESENT)
	inherit := false
	if a.PTY != nil {
		// The attribute's value is the HPCON itself, not a pointer to it.
		hpc := a.PTY.Handle()
		if err := attrs.Update(windows.PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, *(*unsafe.Pointer)(unsafe.Pointer(&hpc)), unsafe.Sizeof(hpc)); err != nil {
			return nil, fmt.Errorf("attach the pseudo console: %w", err)
		}
	} else {
		// Inheritable duplicates of the three handles, listed: nothing
		// else of forgebox's is inherited, even a handle another thread
		// made inheritable meanwhile.
		syscall.ForkLock.Lock()
		defer syscall.ForkLock.Unlock()
		var list []windows.Handle
		dups := make([]windows.Handle, 3)
		self := windows.CurrentProcess()
		for i, h := range []windows.Handle{a.Stdin, a.Stdout, a.Stderr} {
			if h == 0 || h == windows.InvalidHandle {
				continue
			}
			if err := windows.DuplicateHandle(self, h, self, &dups[i], 0, true, windows.DUPLICATE_SAME_ACCESS); err != nil {
				closeAll(dups)
				return nil, fmt.Errorf("pass standard handle %d: %w", i, err)
			}
			list = append(list, dups[i])
		}
		defer closeAll(dups)
		si.StdInput, si.StdOutput, si.StdErr = dups[0], dups[1], dups[2]
		if len(list) > 0 {
			list = slices.Compact(list)
			if err := attrs.Update(windows.PROC_THREAD_ATTRIBUTE_HANDLE_LIST, unsafe.Pointer(&list[0]), uintptr(len(list))*unsafe.Sizeof(list[0])); err != nil {
				return nil, fmt.Errorf("list the inherited handles: %w", err)
			}
			inherit = true
		}
		if a.NoWindow {
			flags |= windows.CREATE_NO_WINDOW
		}
	}
	si.ProcThreadAttributeList = attrs.List()

	var pi windows.ProcessInformation
	if a.Token != 0 {
		err = windows.CreateProcessAsUser(a.Token, app, cmdline, nil, nil, inherit, flags, env, dir, &si.StartupInfo, &pi)
	} else {
		err = windows.CreateProcess(app, cmdline, nil, nil, inherit, flags, env, dir, &si.StartupInfo, &pi)
	}
	if err != nil {
		return nil, &StartError{Program: a.App, Err: err}
	}
	defer windows.CloseHandle(pi.Thread)
	if err := a.Job.Assign(pi.Process); err != nil {
		windows.TerminateProcess(pi.Process, 1)
		windows.CloseHandle(pi.Process)
		return nil, err
	}
	if _, err := windows.ResumeThread(pi.Thread); err != nil {
		windows.TerminateProcess(pi.Process, 1)
		windows.CloseHandle(pi.Process)
		return nil, fmt.Errorf("ResumeThread: %w", err)
	}
	return &Process{Handle: pi.Process, Pid: pi.ProcessId}, nil
}

// StartError is a process that could not be created: the program is
// missing, not a program, or not readable by the token.
type StartError struct {
	Program string
	Err     error
}

func (e *StartError) Error() string { return fmt.Sprintf("create process %s: %v", e.Program, e.Err) }
func (e *StartError) Unwrap() error { return e.Err }

// Wait waits for the process to exit and returns its exit code.
func (p *Process) Wait() (uint32, error) {
	if _, err := windows.WaitForSingleObject(p.Handle, windows.INFINITE); err != nil {
		return 0, fmt.Errorf("wait for process %d: %w", p.Pid, err)
	}
	var code uint32
	if err := windows.GetExitCodeProcess(p.Handle, &code); err != nil {
		return 0, fmt.Errorf("exit code of process %d: %w", p.Pid, err)
	}
	return code, nil
}

// Close releases the process handle.
func (p *Process) Close() error { return windows.CloseHandle(p.Handle) }

func closeAll(hs []windows.Handle) {
	for i, h := range hs {
		if h != 0 {
			windows.CloseHandle(h)
			hs[i] = 0
		}
	}
}
