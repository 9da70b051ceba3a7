package sandbox

import (
	"errors"
	"slices"
	"testing"
)

func TestWinPathClean(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{`C:\`, `C:\`},
		{`c:\`, `C:\`},
		{`C:/`, `C:\`},
		{`C:\Users\alice`, `C:\Users\alice`},
		{`c:/Users/alice/`, `C:\Users\alice`},
		{`C:\Users\\alice\\\src`, `C:\Users\alice\src`},
		{`C:\Users\.\alice\.`, `C:\Users\alice`},
		{`C:\Users\bob\..\alice`, `C:\Users\alice`},
		{`C:\..\..\Windows`, `C:\Windows`}, // ".." stops at the root, as in Win32
		{`C:\a\b\..\..\..`, `C:\`},
		{`\\server\share`, `\\server\share`},
		{`\\server\share\`, `\\server\share`},
		{`//server/share/dir/`, `\\server\share\dir`},
		{`\\server\share\a\..\..\b`, `\\server\share\b`}, // the share is the root
		{`\\?\C:\Users\alice`, `C:\Users\alice`},
		{`\\?\c:\`, `C:\`},
		{`\\?\UNC\server\share\dir`, `\\server\share\dir`},
		{`\\?\unc\server\share`, `\\server\share`},
		{`C:\Program Files\Go`, `C:\Program Files\Go`},
		{`C:\a\...b`, `C:\a\...b`},
		{`C:\a\.git`, `C:\a\.git`},
		{`C:\a\b~c`, `C:\a\b~c`},                         // a tilde without a digit
		{`C:\a\longname~1x.txt`, `C:\a\longname~1x.txt`}, // base over 8 characters
		{`C:\a\CONSOLE`, `C:\a\CONSOLE`},
		{`C:\a\COM10`, `C:\a\COM10`},
		{`C:\日本語\ファイル`, `C:\日本語\ファイル`},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := cleanWinPath(c.in)
			if err != nil || got != c.want {
				t.Errorf("cleanWinPath(%q) = %q, %v, want %q", c.in, got, err, c.want)
			}
		})
	}
}

func TestWinPathRefused(t *testing.T) {
	for _, in := range []string{
		``,
		`relative\path`,
		`.\x`,
		`..\x`,
		`\Windows`,        // rooted on the current drive
		`/Windows`,        // same with a slash
		`C:`,              // the current directory of drive C
		`C:Windows`,       // drive-relative
		`\\server`,        // no share
		`\\server\`,       // no share
		`\\\server\share`, // three separators
		`\\.\C:\x`,        // device namespace
		`\\.\pipe\docker_engine`,
		`//./C:/x`,
		`\??\C:\x`,
		`//?/C:/x`,
		`\\?\C:\a\..\b`, // verbatim: ".." is not resolved
		`\\?\C:\a\.\b`,
		`\\?\C:/a`,    // verbatim: "/" is no separator
		`\\?\C:\a\\b`, // verbatim: an empty name
		`\\?\Volume{01234567-89ab-cdef-0123-456789abcdef}\x`,
		`\\?\GLOBALROOT\Device\HarddiskVolume1\x`,
		`C:\a\file.txt:stream`, // alternate data stream
		`C:\a\file::$DATA`,
		`C:\a\dir:$I30:$INDEX_ALLOCATION`,
		`C:\ws.`,        // trailing dot
		`C:\ws\sub `,    // trailing space
		`C:\ws\sub.\x`,  // trailing dot inside
		`\\?\C:\ws.`,    // verbatim trailing dot
		`C:\PROGRA~1\x`, // 8.3 short name
		`C:\Users\ALICE~1`,
		`C:\a\MYDOC~12.TXT`,
		`C:\a\NUL`,
		`C:\a\nul.txt`,
		`C:\a\con`,
		`C:\a\COM1`,
		`C:\a\lpt9.log`,
		`C:\a\COM¹`,
		`C:\a\CONIN$`,
		`C:\a\aux .txt`,
		`C:\a\b*c`,
		`C:\a\b?c`,
		`C:\a\b"c`,
		`C:\a\b<c`,
		`C:\a\b|c`,
		"C:\\a\\b\x00c",
		"C:\\a\\b\tc",
		`\\ser:ver\share`,
		`\\server\sha*re`,
	} {
		t.Run(in, func(t *testing.T) {
			got, err := cleanWinPath(in)
			var pe *winPathError
			if !errors.As(err, &pe) {
				t.Fatalf("cleanWinPath(%q) = %q, %v, want a refusal", in, got, err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("cleanWinPath(%q): errors.Is(err, ErrInvalid) = false", in)
			}
		})
	}
}

func TestWinPathWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir          string
		within, beneath bool
	}{
		{`C:\ws`, `C:\ws`, true, false},
		{`C:\ws\`, `C:\ws`, true, false},
		{`C:\ws`, `C:\ws\`, true, false},
		{`C:\ws\src\main.go`, `C:\ws`, true, true},
		{`c:\WS\Src`, `C:\ws`, true, true},
		{`C:/ws/src`, `c:\WS\`, true, true},
		{`C:\ws2`, `C:\ws`, false, false}, // a prefix of the name is not a parent
		{`C:\ws2\x`, `C:\ws`, false, false},
		{`C:\w`, `C:\ws`, false, false},
		{`C:\ws\..\ws2`, `C:\ws`, false, false},
		{`C:\ws\sub\..\..\ws\x`, `C:\ws`, true, true},
		{`C:\ws\..`, `C:\ws`, false, false},
		{`D:\ws`, `C:\ws`, false, false},
		{`C:\anything`, `C:\`, true, true},
		{`C:\`, `C:\`, true, false},
		{`D:\anything`, `C:\`, false, false},
		{`\\?\C:\ws\x`, `C:\ws`, true, true},
		{`C:\ws\x`, `\\?\c:\WS`, true, true},
		{`\\server\share\ws\x`, `\\SERVER\Share\ws`, true, true},
		{`\\?\UNC\server\share\ws`, `\\server\share\ws`, true, false},
		{`\\server\share2\ws`, `\\server\share\ws`, false, false},
		{`\\server\share`, `\\server\share`, true, false},
		{`\\server\share\x`, `\\server\share`, true, true},
		{`\\other\share\x`, `\\server\share`, false, false},
		{`\\server\share\x`, `C:\`, false, false}, // UNC is never under a drive
		{`C:\x`, `\\localhost\C$`, false, false},  // lexical: admin shares are aliases the text cannot see
		{`C:\Users\Ärger\x`, `C:\users\ärger`, true, true},
		{`C:\ΣΊΣΥΦΟΣ\x`, `C:\σίσυφος`, true, true},
	} {
		t.Run(c.p+" in "+c.dir, func(t *testing.T) {
			got, err := winWithin(c.p, c.dir)
			if err != nil || got != c.within {
				t.Errorf("winWithin(%q, %q) = %v, %v, want %v", c.p, c.dir, got, err, c.within)
			}
			got, err = winBeneath(c.p, c.dir)
			if err != nil || got != c.beneath {
				t.Errorf("winBeneath(%q, %q) = %v, %v, want %v", c.p, c.dir, got, err, c.beneath)
			}
		})
	}
}

func TestWinPathWithinRefusesAmbiguous(t *testing.T) {
	for _, c := range []struct{ p, dir string }{
		{`C:\PROGRA~1\x`, `C:\Program Files`},
		{`C:\ws\x`, `C:\PROGRA~1`},
		{`C:\ws.\x`, `C:\ws`},
		{`C:\ws\x:secret`, `C:\ws`},
		{`ws\x`, `C:\ws`},
		{`C:\ws\x`, `C:ws`},
	} {
		if got, err := winWithin(c.p, c.dir); !errors.Is(err, ErrInvalid) {
			t.Errorf("winWithin(%q, %q) = %v, %v, want an ErrInvalid refusal", c.p, c.dir, got, err)
		}
		if got, err := winBeneath(c.p, c.dir); !errors.Is(err, ErrInvalid) {
			t.Errorf("winBeneath(%q, %q) = %v, %v, want an ErrInvalid refusal", c.p, c.dir, got, err)
		}
	}
}

func TestWinPathRel(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   []string
	}{
		{`C:\ws\.git\hooks`, `C:\ws`, []string{".git", "hooks"}},
		{`c:\WS\.git\hooks`, `C:\ws`, []string{".git", "hooks"}}, // the components of p, as given
		{`C:\ws`, `C:\ws`, []string{}},
		{`\\s\sh\a\b`, `\\s\sh`, []string{"a", "b"}},
	} {
		got, err := winRel(c.p, c.dir)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("winRel(%q, %q) = %q, %v, want %q", c.p, c.dir, got, err, c.want)
		}
	}
	if _, err := winRel(`C:\other`, `C:\ws`); !errors.Is(err, ErrInvalid) {
		t.Errorf("winRel(outside) = %v, want ErrInvalid", err)
	}
}

func TestWinPathHelpers(t *testing.T) {
	for _, c := range []struct {
		name          string
		device, short bool
	}{
		{"NUL", true, false}, {"nul.tar.gz", true, false}, {"Com7", true, false}, {"LPT0", true, false},
		{"CONOUT$", true, false}, {"COM", false, false}, {"NULL", false, false}, {"console", false, false},
		{"PROGRA~1", false, true}, {"ABC~9.TXT", false, true}, {"A~1", false, true},
		{"~1", false, false}, {"ABC~X", false, false}, {"ABCDEFGHI~1", false, false}, {"ABC~1.TEXT", false, false},
	} {
		if got := isDOSDevice(c.name); got != c.device {
			t.Errorf("isDOSDevice(%q) = %v, want %v", c.name, got, c.device)
		}
		if got := isShortName(c.name); got != c.short {
			t.Errorf("isShortName(%q) = %v, want %v", c.name, got, c.short)
		}
	}
}
