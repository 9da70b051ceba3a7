package conpty

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Well-known SIDs of the token.
const (
	everyoneSID      = "S-1-1-0"
	usersSID         = "S-1-5-32-545"
	authenticatedSID = "S-1-5-11"
	restrictedSID    = "S-1-5-12" // RESTRICTED: granted where Windows expects restricted code
	adminsSID        = "S-1-5-32-544"
	localAdminSID    = "S-1-5-114" // a local account in Administrators
)

// TokenOptions shape a restricted token.
type TokenOptions struct {
	// RunSID is the run's own SID (RunSID makes one): it is among the
	// restricting SIDs, and the descriptors a run edits name it.
	RunSID string
	// KeepUser keeps the user's own SID among the restricting SIDs: what
	// the user may read, the command may read. Without it (the strict
	// profile) the command reads only what Everyone, Users, Authenticated
	// Users, RESTRICTED, the logon session or the run's SID may.
	KeepUser bool
}

// TokenInfo is what NewRestrictedToken made, for the record of a run.
type TokenInfo struct {
	User        string
	Logon       string
	Restricting []string
	DenyOnly    []string
}

// NewRestrictedToken makes the command's primary token from the caller's:
// CreateRestrictedToken with DISABLE_MAX_PRIVILEGE (every privilege goes
// but SeChangeNotifyPrivilege, which only skips traverse checks),
// Administrators deny-only and the restricting SIDs of o; then the Low
// integrity level (TokenIntegrityLevel) and a default DACL that lets the
// run's SID reach its own processes and threads (TokenDefaultDacl). The
// caller closes the token.
//
// A restricted version of the caller's own token needs no privilege to be
// given to CreateProcessAsUser (SE_ASSIGNPRIMARYTOKEN_NAME is required
// only for other tokens).
func NewRestrictedToken(o TokenOptions) (windows.Token, TokenInfo, error) {
	var info TokenInfo
	var own windows.Token
	access := uint32(windows.TOKEN_DUPLICATE | windows.TOKEN_QUERY | windows.TOKEN_ASSIGN_PRIMARY |
		windows.TOKEN_ADJUST_DEFAULT | windows.TOKEN_IMPERSONATE)
	if err := windows.OpenProcessToken(windows.CurrentProcess(), access, &own); err != nil {
		return 0, info, fmt.Errorf("open the process token: %w", err)
	}
	defer own.Close()
	tu, err := own.GetTokenUser()
	if err != nil {
		return 0, info, fmt.Errorf("query the token's user: %w", err)
	}
	info.User = tu.User.Sid.String()
	groups, err := own.GetTokenGroups()
	if err != nil {
		return 0, info, fmt.Errorf("query the token's groups: %w", err)
	}
	var present []string
	for _, g := range groups.AllGroups() {
		s := g.Sid.String()
		present = append(present, s)
		if g.Attributes&windows.SE_GROUP_LOGON_ID == windows.SE_GROUP_LOGON_ID && info.Logon == "" {
			info.Logon = s
		}
	}
	info.Restricting = []string{o.RunSID, everyoneSID, usersSID, authenticatedSID, restrictedSID}
	if info.Logon != "" {
		// The window station and desktop grant the logon SID: without it
		// user32 fails to initialize in the command.
		info.Restricting = append(info.Restricting, info.Logon)
	}
	if o.KeepUser {
		info.Restricting = append(info.Restricting, info.User)
	}
	for _, s := range []string{adminsSID, localAdminSID} {
		if slices.Contains(present, s) {
			info.DenyOnly = append(info.DenyOnly, s)
		}
	}

	var pin runtime.Pinner
	defer pin.Unpin()
	sids := func(list []string) ([]windows.SIDAndAttributes, error) {
		out := make([]windows.SIDAndAttributes, 0, len(list))
		for _, s := range list {
			sid, err := windows.StringToSid(s)
			if err != nil {
				return nil, fmt.Errorf("SID %s: %w", s, err)
			}
			pin.Pin(sid)
			out = append(out, windows.SIDAndAttributes{Sid: sid})
		}
		return out, nil
	}
	restrict, err := sids(info.Restricting)
	if err != nil {
		return 0, info, err
	}
	disable, err := sids(info.DenyOnly)
	if err != nil {
		return 0, info, err
	}
	token, err := createRestrictedToken(own, disableMaxPrivilege, disable, restrict)
	if err != nil {
		return 0, info, fmt.Errorf("CreateRestrictedToken: %w", err)
	}
	if err := setLowIntegrity(token); err != nil {
		token.Close()
		return 0, info, err
	}
	if err := setDefaultDACL(token, info.User, o.RunSID); err != nil {
		token.Close()
		return 0, info, err
	}
	if err := verifyToken(token); err != nil {
		token.Close()
		return 0, info, err
	}
	return token, info, nil
}

// verifyToken reads back what the token must be: restricted, and Low. A
// system that accepts the calls and ignores them (Wine stubs both) must
// not pass for a sandbox.
func verifyToken(token windows.Token) error {
	restricted, err := token.IsRestricted()
	if err != nil {
		return fmt.Errorf("check that the token is restricted: %w", err)
	}
	if !restricted {
		return errors.New("the system made a token without restricting SIDs")
	}
	var n uint32
	buf := make([]byte, 128)
	if err := windows.GetTokenInformation(token, windows.TokenIntegrityLevel, &buf[0], uint32(len(buf)), &n); err != nil {
		return fmt.Errorf("read the token's integrity level: %w", err)
	}
	tml := (*windows.Tokenmandatorylabel)(unsafe.Pointer(&buf[0]))
	if got := tml.Label.Sid.String(); got != LowLabelSID {
		return fmt.Errorf("the token's integrity level is %s, not Low (%s)", got, LowLabelSID)
	}
	return nil
}

// setLowIntegrity lowers the token to the Low integrity level. Lowering
// needs no privilege.
func setLowIntegrity(token windows.Token) error {
	low, err := windows.StringToSid(LowLabelSID)
	if err != nil {
		return err
	}
	tml := windows.Tokenmandatorylabel{Label: windows.SIDAndAttributes{Sid: low, Attributes: windows.SE_GROUP_INTEGRITY}}
	err = windows.SetTokenInformation(token, windows.TokenIntegrityLevel, (*byte)(unsafe.Pointer(&tml)), tml.Size())
	runtime.KeepAlive(low)
	if err != nil {
		return fmt.Errorf("set the token's integrity level to Low: %w", err)
	}
	return nil
}

// setDefaultDACL sets the DACL the command's own new objects get when
// nothing else gives them one (its processes, threads, pipes): the user,
// SYSTEM and the run's SID may use them. Without the run's SID, a token
// whose restricting SIDs exclude the user could not open its own process.
func setDefaultDACL(token windows.Token, user, runSID string) error {
	acl := &ACL{Revision: 2}
	for _, s := range []string{user, SystemSID, runSID} {
		acl.ACEs = append(acl.ACEs, ACE{Type: AceAllowed, Mask: GenericAll, SID: s})
	}
	b, err := acl.Bytes()
	if err != nil {
		return err
	}
	d := tokenDefaultDACL{DefaultDACL: &b[0]}
	err = windows.SetTokenInformation(token, windows.TokenDefaultDacl, (*byte)(unsafe.Pointer(&d)), uint32(unsafe.Sizeof(d)))
	runtime.KeepAlive(b)
	if err != nil {
		return fmt.Errorf("set the token's default DACL: %w", err)
	}
	return nil
}
