package selftest

import (
	"io/fs"
	"os"
)

// setidHostCheck looks at the modes of the files setidAttempts made, from
// the host.
func (b *bait) setidHostCheck(f findings) {
	for _, name := range []string{baitSetidChmod, baitSetidCreate} {
		rel := baitWorkspace + "/" + name
		fi, err := os.Lstat(b.path(rel))
		switch {
		case err != nil && !os.IsNotExist(err):
			f.unclear[classSetidFile] = append(f.unclear[classSetidFile], rel+": "+err.Error())
		case err == nil && fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0:
			f.changed[classSetidFile] = append(f.changed[classSetidFile], rel+": mode "+fi.Mode().String()+" on the host")
		}
	}
	if len(f.changed[classSetidFile]) == 0 {
		f.notes[classSetidFile] = append(f.notes[classSetidFile], "host: no setuid or setgid bit on the probe's files")
	}
}
