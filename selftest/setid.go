package selftest

// classSetidFile: a file the sandbox leaves in the workspace with the
// setuid or setgid bit (issue 16, class 3). Run as root, a setuid shell
// there makes any host user root.
const classSetidFile = "setid-file"

// Bait names below the workspace for classSetidFile.
const (
	baitSetidChmod  = "setid-chmod.sh"
	baitSetidCreate = "setid-create.sh"
)

var setidClass = class{classSetidFile, "make a setuid or setgid file", []layer{layerSeccomp}}

// setidAttempts write a script in the workspace and try to give it the
// setuid and setgid bits, by chmod and by creating a file with them; the
// host then looks at the files' modes (setidHostCheck).
func setidAttempts(t target) []attempt {
	chmod, create := t.path(baitWorkspace+"/"+baitSetidChmod), t.path(baitWorkspace+"/"+baitSetidCreate)
	ws := baitWorkspace + "/"
	return []attempt{
		{[]string{"write", chmod, "#!/bin/sh\nid\n"}, "create " + ws + baitSetidChmod, setup},
		{[]string{"chmod", chmod, "4755"}, "chmod 4755 " + ws + baitSetidChmod, refused},
		{[]string{"chmod", chmod, "2755"}, "chmod 2755 " + ws + baitSetidChmod, refused},
		{[]string{"create-mode", create, "6755"}, "open(O_CREAT, 06755) " + ws + baitSetidCreate, refused},
	}
}
