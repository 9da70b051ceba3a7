package sandbox

import (
	"slices"
	"testing"
)

const baseConfig = "# my repo\n[core]\n\trepositoryformatversion = 0\n\tautocrlf = false ; keep\n[branch \"main\"]\n\tremote = origin\n"

func TestDiffConfig(t *testing.T) {
	for _, tt := range []struct {
		name, after string
		want        []string // key: class
		odd         bool
	}{
		{"unchanged", baseConfig, nil, false},
		{"added", baseConfig + "[user]\n\temail = me@example.com\n", []string{"user.email:2"}, false},
		{"changed", "# my repo\n[core]\n\trepositoryformatversion = 0\n\tautocrlf = true\n[branch \"main\"]\n\tremote = origin\n", []string{"core.autocrlf:2"}, false},
		{"removed", "# my repo\n[core]\n\trepositoryformatversion = 0\n[branch \"main\"]\n\tremote = origin\n", []string{"core.autocrlf:2"}, false},
		{"dangerous", baseConfig + "[core]\n\tfsmonitor = ./x\n", []string{"core.fsmonitor:0"}, false},
		{"remote by url", "# my repo\n[core]\n\trepositoryformatversion = 0\n\tautocrlf = false ; keep\n[branch \"main\"]\n\tremote = https://evil/x\n", []string{"branch.main.remote:1"}, false},
		{"header line", baseConfig + "[alias] x = !sh\n", []string{"alias.x:0"}, false},
		{"case of names", baseConfig + "[CORE]\n\tFSMonitor = x\n", []string{"core.fsmonitor:0"}, false},
		{"continued", baseConfig + "[user]\n\tname = a \\\n[core] fsmonitor = x\n", nil, true},
		{"malformed", baseConfig + "[core\n\tfsmonitor = x\n", nil, true},
		{"bad key", baseConfig + "[user]\n\tcore.fsmonitor = x\n", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			changes, odd := diffConfig(baseConfig, tt.after)
			if (odd != "") != tt.odd {
				t.Fatalf("diffConfig odd = %q; want odd %v", odd, tt.odd)
			}
			var got []string
			for _, c := range changes {
				got = append(got, c.Key()+":"+string(rune('0'+c.Class())))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("diffConfig = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestMergeConfig(t *testing.T) {
	for _, tt := range []struct {
		name, before, after, current, want string
		kept                               []string
	}{
		{name: "new section keeps the rest",
			before: baseConfig, after: baseConfig + "[user]\n\temail = me@example.com\n", current: baseConfig,
			want: baseConfig + "[user]\n\temail = me@example.com\n"},
		{name: "in place, comments kept",
			before:  baseConfig,
			after:   "# my repo\n[core]\n\trepositoryformatversion = 0\n\tautocrlf = true\n[branch \"main\"]\n\tremote = origin\n",
			current: baseConfig,
			want:    "# my repo\n[core]\n\trepositoryformatversion = 0\n\tautocrlf = true\n[branch \"main\"]\n\tremote = origin\n"},
		{name: "unset",
			before: baseConfig, after: "# my repo\n[core]\n\trepositoryformatversion = 0\n[branch \"main\"]\n\tremote = origin\n", current: baseConfig,
			want: "# my repo\n[core]\n\trepositoryformatversion = 0\n[branch \"main\"]\n\tremote = origin\n"},
		{name: "into an existing section",
			before: baseConfig, after: baseConfig + "\trebase = true\n", current: baseConfig + "# end\n",
			want: baseConfig + "\trebase = true\n# end\n"},
		{name: "the owner's edit of another key stays",
			before: baseConfig, after: baseConfig + "[user]\n\tname = Agent\n",
			current: baseConfig + "[pull]\n\trebase = true\n",
			want:    baseConfig + "[pull]\n\trebase = true\n[user]\n\tname = Agent\n"},
		{name: "the owner's edit of the same key wins",
			before: baseConfig, after: baseConfig + "[user]\n\tname = Agent\n",
			current: baseConfig + "[user]\n\tname = Owner\n",
			want:    baseConfig + "[user]\n\tname = Owner\n", kept: []string{"user.name"}},
		{name: "a key on the header's line",
			before: "[user] name = a\n", after: "[user] name = b\n", current: "[user] name = a\n",
			want: "[user]\n\tname = b\n"},
		{name: "removed from the header's line",
			before: "[user] name = a\n\temail = e\n", after: "[user]\n\temail = e\n", current: "[user] name = a\n\temail = e\n",
			want: "[user]\n\temail = e\n"},
		{name: "several values",
			before: "[remote \"o\"]\n\tfetch = a\n", after: "[remote \"o\"]\n\tfetch = a\n\tfetch = b\n", current: "[remote \"o\"]\n\tfetch = a\n",
			want: "[remote \"o\"]\n\tfetch = a\n\tfetch = b\n"},
		{name: "no newline at the end",
			before: "[core]\n\tbare = false", after: "[core]\n\tbare = false\n[user]\n\tname = x\n", current: "[core]\n\tbare = false",
			want: "[core]\n\tbare = false\n[user]\n\tname = x\n"},
		{name: "subsection case",
			before: "[branch \"Main\"]\n\trebase = false\n", after: "[branch \"Main\"]\n\trebase = false\n[branch \"main\"]\n\trebase = true\n",
			current: "[branch \"Main\"]\n\trebase = false\n",
			want:    "[branch \"Main\"]\n\trebase = false\n[branch \"main\"]\n\trebase = true\n"},
		{name: "a key after a header whose subsection holds the key's text",
			before: "[branch \"rebase = false\"] rebase = false\n", after: "[branch \"rebase = false\"] rebase = true\n",
			current: "[branch \"rebase = false\"] rebase = false\n",
			want:    "[branch \"rebase = false\"]\n\trebase = true\n"},
		{name: "CRLF",
			before: "[core]\r\n\tautocrlf = false\r\n", after: "[core]\r\n\tautocrlf = true\r\n", current: "[core]\r\n\tautocrlf = false\r\n",
			want: "[core]\r\n\tautocrlf = true\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			changes, odd := diffConfig(tt.before, tt.after)
			if odd != "" {
				t.Fatalf("diffConfig: %s", odd)
			}
			got, kept, odd := mergeConfig(tt.current, tt.before, changes)
			if odd != "" {
				t.Fatalf("mergeConfig: %s", odd)
			}
			if got != tt.want || !slices.Equal(kept, tt.kept) {
				t.Errorf("mergeConfig(%q) = %q, kept %q; want %q, kept %q", tt.current, got, kept, tt.want, tt.kept)
			}
		})
	}
}

// mergeConfig writes only ordinary changes, whatever it is handed: the
// text it would write is diffed against the current one again.
func TestMergeConfigRefusesOtherChanges(t *testing.T) {
	before := "[core]\n\tbare = false\n"
	changes, _ := diffConfig(before, before+"[core]\n\tfsmonitor = x\n")
	if got, _, odd := mergeConfig(before, before, changes); got != before || odd == "" {
		t.Errorf("mergeConfig(core.fsmonitor) = %q, %q; want the text unchanged and a reason", got, odd)
	}
}
