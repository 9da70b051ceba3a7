package conpty

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Job is a job object holding a run's process tree. Closing it (or
// forgebox dying, which closes it) kills every process in it.
type Job struct {
	h    windows.Handle
	port windows.Handle
	once sync.Once
	done chan struct{}

	processLimitHits atomic.Int64
	memoryLimitHits  atomic.Int64
}

// NewJob creates an unnamed job, so that nothing can open it by name, with
// kill-on-close, no breakaway, crash dialogs suppressed, and a completion
// port for its notifications (ProcessLimitHits, MemoryLimitHits).
// https://learn.microsoft.com/windows/win32/procthread/job-objects
func NewJob() (*Job, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("CreateJobObject: %w", err)
	}
	j := &Job{h: h, done: make(chan struct{})}
	if err := j.setExtended(0, 0); err != nil {
		windows.CloseHandle(h)
		return nil, err
	}
	// Notifications are best effort by design ("delivery to the
	// completion port is not guaranteed"): the limits hold without them.
	port, err := windows.CreateIoCompletionPort(windows.InvalidHandle, 0, 0, 1)
	if err == nil {
		assoc := jobAssociateCompletionPort{CompletionKey: uintptr(h), CompletionPort: port}
		_, err = windows.SetInformationJobObject(h, windows.JobObjectAssociateCompletionPortInformation,
			uintptr(unsafe.Pointer(&assoc)), uint32(unsafe.Sizeof(assoc)))
		if err != nil {
			windows.CloseHandle(port)
		} else {
			j.port = port
			go j.listen()
		}
	}
	if j.port == 0 {
		close(j.done)
	}
	return j, nil
}

// setExtended sets the job's extended limits: always kill-on-close and
// die-on-unhandled-exception, never breakaway; plus the active process
// limit and the job memory limit when non-zero.
func (j *Job) setExtended(processes uint32, memory uint64) error {
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE |
		windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION
	if processes > 0 {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS
		info.BasicLimitInformation.ActiveProcessLimit = processes
	}
	if memory > 0 {
		info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_JOB_MEMORY
		info.JobMemoryLimit = uintptr(min(memory, uint64(math.MaxUint)))
	}
	_, err := windows.SetInformationJobObject(j.h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	if err != nil {
		return fmt.Errorf("set the job's limits: %w", err)
	}
	return nil
}

// SetLimits sets the active process limit and the job memory limit (0:
// none), keeping kill-on-close.
func (j *Job) SetLimits(processes uint32, memory uint64) error {
	return j.setExtended(processes, memory)
}

// SetCPURate caps the job's CPU use with a hard cap of rate hundredths of
// a percent of the machine (1-10000). Windows before 8 has no CPU rate
// control and refuses it.
func (j *Job) SetCPURate(rate uint32) error {
	if rate == 0 || rate > 10000 {
		return fmt.Errorf("CPU rate %d out of range 1-10000", rate)
	}
	info := jobCPURateControl{ControlFlags: jobCPURateEnable | jobCPURateHardCap, CPURate: rate}
	_, err := windows.SetInformationJobObject(j.h, windows.JobObjectCpuRateControlInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	if err != nil {
		return fmt.Errorf("set the job's CPU rate: %w", err)
	}
	return nil
}

// UIRestrictions is what SetUIRestrictions denies the job's processes.
var UIRestrictions = []string{
	"USER handles of processes outside the job", "reading the clipboard", "writing the clipboard",
	"global atoms", "switching or creating desktops", "changing display settings",
	"changing system parameters", "ExitWindows",
}

// SetUIRestrictions denies the job's processes the USER interface of the
// rest of the session (JOBOBJECT_BASIC_UI_RESTRICTIONS): UIRestrictions.
func (j *Job) SetUIRestrictions() error {
	info := windows.JOBOBJECT_BASIC_UI_RESTRICTIONS{UIRestrictionsClass: windows.JOB_OBJECT_UILIMIT_HANDLES |
		windows.JOB_OBJECT_UILIMIT_READCLIPBOARD | windows.JOB_OBJECT_UILIMIT_WRITECLIPBOARD |
		windows.JOB_OBJECT_UILIMIT_GLOBALATOMS | windows.JOB_OBJECT_UILIMIT_DESKTOP |
		windows.JOB_OBJECT_UILIMIT_DISPLAYSETTINGS | windows.JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS |
		windows.JOB_OBJECT_UILIMIT_EXITWINDOWS}
	_, err := windows.SetInformationJobObject(j.h, windows.JobObjectBasicUIRestrictions,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	if err != nil {
		return fmt.Errorf("set the job's UI restrictions: %w", err)
	}
	return nil
}

// Assign puts a (suspended) process in the job.
func (j *Job) Assign(process windows.Handle) error {
	if err := windows.AssignProcessToJobObject(j.h, process); err != nil {
		return fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	return nil
}

// Terminate kills every process of the job; they exit with code.
func (j *Job) Terminate(code uint32) error {
	return windows.TerminateJobObject(j.h, code)
}

// Accounting is the job's use of the machine.
type Accounting struct {
	UserTime, KernelTime time.Duration
	ActiveProcesses      uint32
	TotalProcesses       uint32
	PeakMemoryBytes      uint64
}

// Accounting reads the job's CPU times, process counts and peak committed
// memory.
func (j *Job) Accounting() (Accounting, error) {
	var b jobBasicAccounting
	if err := windows.QueryInformationJobObject(j.h, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&b)), uint32(unsafe.Sizeof(b)), nil); err != nil {
		return Accounting{}, fmt.Errorf("query the job's accounting: %w", err)
	}
	a := Accounting{
		UserTime:        time.Duration(b.TotalUserTime) * 100,
		KernelTime:      time.Duration(b.TotalKernelTime) * 100,
		ActiveProcesses: b.ActiveProcesses,
		TotalProcesses:  b.TotalProcesses,
	}
	var x windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if err := windows.QueryInformationJobObject(j.h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&x)), uint32(unsafe.Sizeof(x)), nil); err == nil {
		a.PeakMemoryBytes = uint64(x.PeakJobMemoryUsed)
	}
	return a, nil
}

// WaitEmpty waits until no process is left in the job, polling its
// accounting (completion port messages are not guaranteed).
func (j *Job) WaitEmpty(ctx context.Context) error {
	pause := 200 * time.Microsecond
	for {
		a, err := j.Accounting()
		if err != nil {
			return err
		}
		if a.ActiveProcesses == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d processes still in the job: %w", a.ActiveProcesses, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// ProcessLimitHits counts the process creations the active process limit
// refused, as far as the notifications arrived.
func (j *Job) ProcessLimitHits() int64 { return j.processLimitHits.Load() }

// MemoryLimitHits counts the allocations the job memory limit refused, as
// far as the notifications arrived.
func (j *Job) MemoryLimitHits() int64 { return j.memoryLimitHits.Load() }

// listen counts the job's limit notifications until the port closes.
func (j *Job) listen() {
	defer close(j.done)
	for {
		var msg uint32
		var key uintptr
		var ov *windows.Overlapped
		err := windows.GetQueuedCompletionStatus(j.port, &msg, &key, &ov, windows.INFINITE)
		if err != nil {
			if ov == nil {
				return // the port was closed (ERROR_ABANDONED_WAIT_0) or broke
			}
			continue
		}
		switch msg {
		case jobMsgActiveProcessLimit:
			j.processLimitHits.Add(1)
		case jobMsgJobMemoryLimit, jobMsgProcessMemoryLimit:
			j.memoryLimitHits.Add(1)
		}
	}
}

// Close closes the job, which kills whatever is left in it, and its port.
func (j *Job) Close() error {
	var err error
	j.once.Do(func() {
		err = windows.CloseHandle(j.h)
		if j.port != 0 {
			err = errors.Join(err, windows.CloseHandle(j.port))
			select {
			case <-j.done:
			case <-time.After(time.Second): // a port that does not wake its waiter
			}
		}
	})
	return err
}
