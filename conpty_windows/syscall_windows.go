package conpty

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Entry points golang.org/x/sys/windows (v0.49) lacks, and the structures
// it does not define. Each is resolved on first use; a missing one is an
// error, never a panic.
var (
	advapi32 = windows.NewLazySystemDLL("advapi32.dll")
	kernel32 = windows.NewLazySystemDLL("kernel32.dll")

	// https://learn.microsoft.com/windows/win32/api/securitybaseapi/nf-securitybaseapi-createrestrictedtoken
	procCreateRestrictedToken = advapi32.NewProc("CreateRestrictedToken")
	// https://learn.microsoft.com/windows/win32/api/securitybaseapi/nf-securitybaseapi-setkernelobjectsecurity
	procSetKernelObjectSecurity = advapi32.NewProc("SetKernelObjectSecurity")
	// https://learn.microsoft.com/windows/win32/api/sysinfoapi/nf-sysinfoapi-globalmemorystatusex
	procGlobalMemoryStatusEx = kernel32.NewProc("GlobalMemoryStatusEx")
	// https://learn.microsoft.com/windows/console/createpseudoconsole: x/sys
	// wraps it, but would panic on a Windows older than 10 1809; this is
	// only looked up to tell first.
	procCreatePseudoConsole = kernel32.NewProc("CreatePseudoConsole")
)

// CreateRestrictedToken flags (winnt.h).
const (
	disableMaxPrivilege = 0x1 // DISABLE_MAX_PRIVILEGE
)

// createRestrictedToken wraps CreateRestrictedToken: a new token from an
// existing one, with SIDs made deny-only, privileges deleted and
// restricting SIDs added.
func createRestrictedToken(existing windows.Token, flags uint32, disable []windows.SIDAndAttributes,
	restrict []windows.SIDAndAttributes) (windows.Token, error) {
	if err := procCreateRestrictedToken.Find(); err != nil {
		return 0, err
	}
	var disablePtr, restrictPtr *windows.SIDAndAttributes
	if len(disable) > 0 {
		disablePtr = &disable[0]
	}
	if len(restrict) > 0 {
		restrictPtr = &restrict[0]
	}
	var token windows.Token
	r, _, err := procCreateRestrictedToken.Call(uintptr(existing), uintptr(flags),
		uintptr(len(disable)), uintptr(unsafe.Pointer(disablePtr)),
		0, 0,
		uintptr(len(restrict)), uintptr(unsafe.Pointer(restrictPtr)),
		uintptr(unsafe.Pointer(&token)))
	if r == 0 {
		return 0, callErr(err)
	}
	return token, nil
}

// setKernelObjectSecurity wraps SetKernelObjectSecurity. Unlike
// SetSecurityInfo and SetNamedSecurityInfo it writes only the object's own
// descriptor: no inheritance is propagated to children.
func setKernelObjectSecurity(h windows.Handle, info windows.SECURITY_INFORMATION, sd []byte) error {
	if err := procSetKernelObjectSecurity.Find(); err != nil {
		return err
	}
	r, _, err := procSetKernelObjectSecurity.Call(uintptr(h), uintptr(info), uintptr(unsafe.Pointer(&sd[0])))
	if r == 0 {
		return callErr(err)
	}
	return nil
}

// memoryStatusEx is MEMORYSTATUSEX.
type memoryStatusEx struct {
	Length               uint32
	MemoryLoad           uint32
	TotalPhys            uint64
	AvailPhys            uint64
	TotalPageFile        uint64
	AvailPageFile        uint64
	TotalVirtual         uint64
	AvailVirtual         uint64
	AvailExtendedVirtual uint64
}

// TotalRAM returns the machine's physical memory in bytes
// (GlobalMemoryStatusEx).
func TotalRAM() (int64, error) {
	if err := procGlobalMemoryStatusEx.Find(); err != nil {
		return 0, err
	}
	m := memoryStatusEx{Length: uint32(unsafe.Sizeof(memoryStatusEx{}))}
	r, _, err := procGlobalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&m)))
	if r == 0 {
		return 0, callErr(err)
	}
	return int64(m.TotalPhys), nil
}

// HasConPTY reports whether this Windows has pseudo consoles (10 1809 and
// later).
func HasConPTY() bool { return procCreatePseudoConsole.Find() == nil }

// Job object structures (winnt.h) that x/sys does not define.
type (
	// JOBOBJECT_CPU_RATE_CONTROL_INFORMATION, with the CpuRate member of
	// its union.
	jobCPURateControl struct {
		ControlFlags uint32
		CPURate      uint32
	}
	// JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
	jobBasicAccounting struct {
		TotalUserTime             int64
		TotalKernelTime           int64
		ThisPeriodTotalUserTime   int64
		ThisPeriodTotalKernelTime int64
		TotalPageFaultCount       uint32
		TotalProcesses            uint32
		ActiveProcesses           uint32
		TotalTerminatedProcesses  uint32
	}
	// JOBOBJECT_ASSOCIATE_COMPLETION_PORT.
	jobAssociateCompletionPort struct {
		CompletionKey  uintptr
		CompletionPort windows.Handle
	}
	// TOKEN_DEFAULT_DACL.
	tokenDefaultDACL struct {
		DefaultDACL *byte
	}
)

// JOBOBJECT_CPU_RATE_CONTROL_INFORMATION control flags.
const (
	jobCPURateEnable  = 0x1 // JOB_OBJECT_CPU_RATE_CONTROL_ENABLE
	jobCPURateHardCap = 0x4 // JOB_OBJECT_CPU_RATE_CONTROL_HARD_CAP
)

// Job notifications posted to the completion port (winnt.h).
const (
	jobMsgActiveProcessLimit = 3  // JOB_OBJECT_MSG_ACTIVE_PROCESS_LIMIT
	jobMsgActiveProcessZero  = 4  // JOB_OBJECT_MSG_ACTIVE_PROCESS_ZERO
	jobMsgJobMemoryLimit     = 10 // JOB_OBJECT_MSG_JOB_MEMORY_LIMIT
	jobMsgProcessMemoryLimit = 9  // JOB_OBJECT_MSG_PROCESS_MEMORY_LIMIT
)

// stillActive is the exit code GetExitCodeProcess reports for a running
// process (STILL_ACTIVE).
const stillActive = 259

// callErr turns the error of a LazyProc call into one that is never nil.
func callErr(err error) error {
	if err == nil || err == windows.ERROR_SUCCESS {
		return errors.New("the call failed without an error code")
	}
	return err
}
