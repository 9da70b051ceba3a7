package sandbox

import "testing"

// Every kind of item that places a clone gets a slot of its own, and every
// clone fills a slot that exactly one placement takes: a kind whose clone
// forgot to advance the slot count would hand its slot to the next item
// (a merge once lost that for the private .git/config).
func TestCloneSlotsAreOneToOne(t *testing.T) {
	items := []viewItem{
		{Kind: kindGrant, Path: "/w", Dir: true},
		{Kind: kindRedirect, Path: "/w/.git/config", From: "/s/link"},
		{Kind: kindProtect, Path: "/w/.git/hooks", Dir: true},
		{Kind: kindCache, Path: "/h/.cache", Dir: true, Source: "/s/caches/k/xdg", Target: "work"},
		{Kind: kindCacheBind, Path: "/run/forgebox-caches/npm", Dir: true, Source: "/s/caches/k/npm/upper"},
		{Kind: kindPin, Path: "/w/.git", Dir: true},
		{Kind: kindTmpfs, Path: "/run", Dir: true, Mode: 0o755},
	}
	ops, slots, err := planMounts(items)
	if err != nil {
		t.Fatal(err)
	}
	cloned := map[uint32]int{}
	placed := map[uint32]int{}
	for _, o := range ops {
		switch o.Op {
		case opClone:
			cloned[o.Slot]++
		case opAttach, opOverlay:
			placed[o.Slot]++
		}
	}
	if len(cloned) != int(slots) || len(placed) != int(slots) {
		t.Errorf("%d slots, %d cloned, %d placed; want every slot cloned and placed once:\n%v", slots, len(cloned), len(placed), ops)
	}
	for s := range uint32(slots) {
		if cloned[s] != 1 || placed[s] != 1 {
			t.Errorf("slot %d: cloned %d times, placed %d times; want once each", s, cloned[s], placed[s])
		}
	}
}
