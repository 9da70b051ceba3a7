package policy

import (
	"fmt"
	"strings"
)

// judgeDd: dd is judged by its of= (a disk there is the end of its file
// system) and if= (reading a whole disk).
func judgeDd(j *judge, c *Command) {
	wrote := false
	for _, a := range c.Rest() {
		k, v, ok := strings.Cut(a.Value, "=")
		if !ok {
			continue
		}
		t := Arg{Value: v, Static: a.Static, Glob: a.Glob, IfEmpty: strings.TrimPrefix(a.IfEmpty, k+"=")}
		switch k {
		case "of":
			wrote = true
			j.add(SafeWrite, 1, "dd writes %s", v)
			if !a.Static {
				j.add(Caution, 5, "dd writes to %s, a path computed at run time", v)
			}
			j.write(t, "dd of=")
		case "if":
			if p := j.place(t); p == PlaceDisk {
				j.add(Caution, 5, "dd reads the whole disk %s", v)
			}
		}
	}
	if !wrote {
		j.add(ReadOnly, 1, "dd copies to standard output")
	}
}

// judgeDisk: programs that format, wipe or repartition. On a device they
// destroy everything on it; on an image file in the workspace they are an
// ordinary write. A name forgebox cannot see is taken for a device.
func judgeDisk(j *judge, c *Command) {
	name := c.Name
	s := scan(c.Rest(), flags{short: "tbLOENmIiGgUTCdJr", long: " type label uuid align output "})
	if name == "diskutil" {
		judgeDiskutil(j, c, s)
		return
	}
	if diskListing(name, &s) {
		j.add(ReadOnly, 1, "%s lists partitions or signatures", name)
		return
	}
	worst := finding{cat: Forbidden, risk: 10, reason: fmt.Sprintf("%s erases a disk", name)}
	if strings.HasSuffix(name, "disk") || name == "parted" {
		worst = finding{cat: Forbidden, risk: 9, reason: fmt.Sprintf("%s repartitions a disk: what is on it is lost", name)}
	}
	local := finding{cat: ReadOnly, risk: -1, reason: ""}
	for _, a := range s.ops {
		var f finding
		switch p := j.place(a); {
		case !a.Static || strings.HasPrefix(j.ctx.Abs(a.Value), "/dev/") || p == PlaceDisk || p == PlaceRoot:
			f = worst
		case isNumber(a.Value) || partedWord(a.Value) || p == PlaceWorkspaceRoot:
			continue
		case p == PlaceWorkspace || p == PlaceTemp:
			f = finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s formats or repartitions the image file %s", name, a.Value)}
		default:
			f = finding{cat: Dangerous, risk: 7, reason: fmt.Sprintf("%s formats or repartitions %s (%s)", name, a.Value, phrase(p))}
		}
		if local.worse(f) {
			local = f
		}
	}
	if local.risk >= 0 {
		worst = local
	}
	j.record(worst)
}

// diskListing reports whether a partitioning program only prints.
func diskListing(name string, s *scanned) bool {
	switch name {
	case "fdisk", "gdisk":
		return s.has("-l", "--list")
	case "sfdisk":
		return s.has("-l", "--list", "-d", "--dump", "-s", "--show-size", "-J", "--json", "-V", "--verify")
	case "sgdisk":
		for _, o := range s.opts {
			if !o.is("-p") && !o.is("-v") && !o.is("-P") && !o.is("--print") && !o.is("--verify") && !o.is("--pretend") {
				return false
			}
		}
		return len(s.opts) > 0
	case "wipefs":
		return !s.has("-a", "--all", "-o", "--offset")
	case "parted":
		printing := s.has("-l", "--list")
		for _, a := range s.ops {
			switch a.Value {
			case "print", "p":
				printing = true
			case "mklabel", "mktable", "mkpart", "mkpartfs", "rm", "resizepart", "resize", "move", "cp", "name", "set", "toggle", "rescue", "disk_set", "disk_toggle", "type":
				return false
			}
		}
		return printing
	}
	return false
}

// partedWord reports whether an operand of parted is a word of its
// command language rather than a device.
func partedWord(v string) bool {
	switch v {
	case "print", "p", "unit", "mklabel", "mktable", "mkpart", "rm", "resizepart", "name", "set", "toggle", "gpt", "msdos",
		"primary", "logical", "extended", "ext4", "ext3", "ext2", "fat32", "fat16", "ntfs", "linux-swap", "on", "off", "boot",
		"esp", "lvm", "raid", "MiB", "GiB", "s", "%", "quit", "free":
		return true
	}
	return strings.HasSuffix(v, "%") || strings.HasSuffix(v, "MiB") || strings.HasSuffix(v, "GiB") || strings.HasSuffix(v, "MB") || strings.HasSuffix(v, "GB")
}

func judgeDiskutil(j *judge, c *Command, s scanned) {
	verb := ""
	if len(s.ops) > 0 {
		verb = strings.ToLower(s.ops[0].Value)
	}
	switch verb {
	case "list", "info", "activity", "apfs", "":
		if len(s.ops) < 2 || s.ops[1].Value == "list" || verb != "apfs" {
			j.add(ReadOnly, 1, "diskutil %s reports on disks", verb)
			return
		}
		j.add(Dangerous, 7, "diskutil apfs changes a container")
	case "erasedisk", "erasevolume", "partitiondisk", "zerodisk", "randomdisk", "secureerase", "reformat", "splitpartition", "mergepartitions":
		j.add(Forbidden, 10, "diskutil %s erases a disk", s.ops[0].Value)
	default:
		j.add(Caution, 5, "diskutil %s changes a disk or volume", s.ops[0].Value)
	}
}
