package sandbox

import "testing"

// The parent and the C child must agree on every wire constant.
func TestWireConstantsMatchC(t *testing.T) {
	if !childLinked {
		t.Skip("built without cgo: no C child to compare with")
	}
	goSide := []int{msgSpec, msgReady, msgError, msgExit, msgView, tagFlags, tagUIDOut, tagGIDOut, tagUIDIn, tagGIDIn,
		tagArg, tagEnv, tagCwd, tagPath, tagMount, tagWinsize, tagAltArg0, tagSlots, tagRunFlags,
		flagNewNet, flagIsolate, runFlagPTY,
		opClone, opAttach, opSetattr, opTmpfs, opMkdir, opMkfile, opSymlink, opHide,
		opFlagRecursive, opFlagDir, syncFD, maxFrame, 48, tagFDs, tagRule, tagSeccomp,
		tagRlimit, fdLandlock, fdCgroup, fdJoinShift, maxJoin,
		tagProxy, readyPidfd, readyMaster, readyProxy}
	for i, want := range goSide {
		if got := wireConstantC(i); got != want {
			t.Errorf("wire constant %d: C has %d, Go has %d", i, got, want)
		}
	}
	if wireConstantC(len(goSide)) != -1 {
		t.Error("the C table has more constants than this test checks")
	}
}
