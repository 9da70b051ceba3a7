package sandbox

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	conpty "github.com/forgebox/forgebox/conpty_windows"
	"golang.org/x/sys/windows"
)

// Check names of the Windows backend, beside those of doctor.go.
const (
	checkRestrictedToken = "restricted_token"
	checkJobObject       = "job_object"
	checkNetwork         = "network_isolation"
	checkSecretHiding    = "secret_hiding"
	checkLeftovers       = "leftover_permissions"
)

// QuickReport describes the host without launching anything.
func QuickReport() Report {
	r := Report{OS: runtime.GOOS, Checks: []Check{}}
	v := windows.RtlGetVersion()
	r.Kernel = fmt.Sprintf("%d.%d.%d", v.MajorVersion, v.MinorVersion, v.BuildNumber)
	if u, err := currentUserName(); err == nil {
		r.User = u
	}
	r.Root = windows.GetCurrentProcessToken().IsElevated()
	r.Checks = append(r.Checks, Check{Name: CheckSandbox, OK: true, Required: true,
		Detail: "restricted Low-integrity token in a job object (run forgebox doctor to try it)"})
	return r
}

// Diagnose tries each layer of the Windows backend.
func Diagnose(ctx context.Context) Report {
	r := QuickReport()
	r.Checks = nil
	add := func(c Check) {
		r.Checks = append(r.Checks, c)
		if c.Required && !c.OK {
			r.Missing = append(r.Missing, c.Name+": "+c.Detail)
		}
	}
	sid, _ := conpty.RunSID()
	if token, info, err := conpty.NewRestrictedToken(conpty.TokenOptions{RunSID: sid}); err != nil {
		add(Check{Name: checkRestrictedToken, Required: true, Detail: err.Error()})
	} else {
		token.Close()
		add(Check{Name: checkRestrictedToken, OK: true, Required: true,
			Detail: "Low integrity, privileges removed, " + fmt.Sprint(len(info.Restricting)) + " restricting SIDs"})
		r.WillEnforce = append(r.WillEnforce, "restricted token at Low integrity: no writes outside the writable roots and Low-labelled locations, no input to your windows")
	}
	job, err := conpty.NewJob()
	if err != nil {
		add(Check{Name: checkJobObject, Required: true, Detail: err.Error()})
	} else {
		detail := "kill on close"
		ok := true
		if err := job.SetUIRestrictions(); err != nil {
			ok, detail = false, "UI restrictions refused: "+err.Error()
		}
		if err := job.SetLimits(4096, 1<<30); err != nil {
			ok, detail = false, "limits refused: "+err.Error()
		}
		add(Check{Name: checkJobObject, OK: ok, Required: true, Detail: detail})
		cpu := Check{Name: "job_cpu_rate", OK: true, Detail: "hard CPU rate caps (--cpus)"}
		if err := job.SetCPURate(10000); err != nil {
			cpu.OK, cpu.Detail = false, err.Error()
		}
		add(cpu)
		job.Close()
		if ok {
			r.WillEnforce = append(r.WillEnforce, "job object: the tree dies with the command, memory and process limits, no clipboard or desktop access")
		}
	}
	pty := Check{Name: CheckPTY, OK: conpty.HasConPTY(), Detail: "pseudo consoles (ConPTY)"}
	if !pty.OK {
		pty.Detail = conpty.ErrNoConPTY.Error()
	}
	add(pty)
	add(Check{Name: checkNetwork, Required: true,
		Detail: "not enforceable per process: --net none and loopback are refused; use --net host (or --best-effort)"})
	left := Check{Name: checkLeftovers, OK: true, Detail: "no permission changes of dead runs in effect"}
	if roots := leftoverGrants(); len(roots) > 0 {
		left.OK = false
		left.Detail = "permission changes of runs that died are still in effect on " + strings.Join(roots, ", ") + "; the next forgebox run undoes them"
	}
	add(left)
	add(Check{Name: checkSecretHiding, Required: true,
		Detail: "only the strict profile keeps your profile (and the secrets in it) unreadable; the workspace profile is refused without --best-effort"})
	return r
}

// currentUserName is DOMAIN\user of the caller.
func currentUserName() (string, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", err
	}
	account, domain, _, err := tu.User.Sid.LookupAccount("")
	if err != nil {
		return "", err
	}
	return domain + `\` + account, nil
}
