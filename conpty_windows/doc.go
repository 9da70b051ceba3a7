// Package conpty is forgebox's Windows plumbing: pseudo consoles (ConPTY),
// restricted Low-integrity tokens, job objects, process creation with all
// three, and the edits to file security descriptors that let such a token
// write the workspace and nothing else. Package sandbox decides what a run
// gets; this package only knows how to do it. It has no mutable package
// state beyond the lazily resolved system DLL entry points.
//
// This file carries no build tag so that the package is visible, and vetted,
// on every OS; acl.go, tree.go and dirinfo.go are plain Go (the binary forms
// of SIDs, ACLs and security descriptors, the edits a run makes and undoes,
// and the directory listing format) and are tested on Linux. Everything
// that calls Windows is in _windows.go files.
//
// What the pieces guarantee, when their calls return without error:
//   - NewRestrictedToken: a primary token of the caller's user with every
//     privilege removed but SeChangeNotifyPrivilege (DISABLE_MAX_PRIVILEGE),
//     Administrators deny-only, restricting SIDs (every access must also be
//     granted to one of them: the run's own SID, the logon SID, Everyone,
//     Users, Authenticated Users, RESTRICTED, and the user's SID unless the
//     profile is strict), and the Low integrity level: the process cannot
//     write objects labelled Medium (every unlabelled file, registry key,
//     named pipe and process of the user), cannot send window messages or
//     input to higher-integrity windows (UIPI), and cannot open the user's
//     processes for anything but limited queries.
//   - NewJob: a job that kills every process in it when its last handle
//     closes (forgebox dying included), refuses breakaway, holds the active
//     process, job memory and CPU rate limits it was given, suppresses
//     crash dialogs, and restricts the USER interface: no clipboard, no
//     USER handles of processes outside the job, no global atoms, no
//     desktop switching, no display or system settings, no ExitWindows.
//   - Start: the process is created suspended, assigned to the job and only
//     then resumed, so that neither it nor any child escapes the job; it
//     inherits only the standard handles it is given (a handle list), or
//     with a PTY none at all.
//   - ApplyTree and RevokeTree: see tree.go. They never follow a junction
//     or symbolic link and never edit a hard-linked file's permissions.
//
// What it does not guarantee:
//   - network isolation: a Low-integrity token can connect anywhere; that
//     takes Windows Filtering Platform rules, which forgebox does not make;
//   - that objects labelled Low by someone else (%USERPROFILE%\AppData\
//     LocalLow, for one) stay unwritable;
//   - reads: Low integrity reads what the user reads, except where the
//     restricting SIDs exclude it (the profile, in the strict profile);
//   - files on network shares: SMB servers check the user, not the
//     integrity level;
//   - brokers that act for Low-integrity callers (COM servers, WMI, the WSL
//     service, Credential Manager, DPAPI): whether each refuses a
//     restricted Low-integrity caller was not verified when this was
//     written;
//   - a UAC elevation prompt the user approves.
package conpty
