package policy

import (
	"strings"
	"testing"
)

func TestKnownRm(t *testing.T) {
	checkKnown(t, []kcase{
		{"the root", "rm -rf /", Deny, Forbidden, 10},
		{"everything under the root", "rm -rf /*", Deny, Forbidden, 10},
		{"the home directory", "rm -rf ~", Deny, Forbidden, 10},
		{"everything in the home directory", "rm -rf ~/*", Deny, Forbidden, 10},
		{"$HOME", "rm -rf $HOME", Deny, Forbidden, 10},
		{"${HOME}/", `rm -rf "${HOME}/"`, Deny, Forbidden, 10},
		{"the home directory by path", "rm -rf /home/u", Deny, Forbidden, 10},
		{"another user's home", "rm -rf /home/other", Deny, Forbidden, 10},
		{"/usr", "rm -rf /usr", Deny, Forbidden, 10},
		{"/etc", "rm -rf /etc", Deny, Forbidden, 10},
		{"/bin", "rm -rf /bin", Deny, Forbidden, 10},
		{"/boot", "rm -rf /boot", Deny, Forbidden, 10},
		{"/var", "rm -rf /var", Deny, Forbidden, 10},
		{"/lib", "rm -rf /lib", Deny, Forbidden, 10},
		{"/home", "rm -rf /home", Deny, Forbidden, 10},
		{"--no-preserve-root", "rm --no-preserve-root -rf /", Deny, Forbidden, 10},
		{"a disk device", "rm -f /dev/sda", Deny, Forbidden, 10},
		{"the parent directory", "rm -rf ..", Deny, anyCat, anyRisk},
		{"an empty variable leaves /", `rm -rf "$DIR/"`, Deny, Dangerous, 8},
		{"an empty variable leaves /*", `rm -rf "$X"/*`, Deny, Dangerous, 8},
		{"an empty variable leaves ~/", "rm -rf ~/$SUB", Deny, Dangerous, 8},
		{"an empty variable leaves the workspace", "rm -rf ./$OUT", Deny, Dangerous, 8},
		{"star", "rm -rf *", Deny, Dangerous, 8},
		{"dot", "rm -rf .", Deny, Dangerous, 8},
		{"dot star", "rm -rf ./*", Deny, Dangerous, 8},
		{"the workspace by path", "rm -rf /home/u/proj", Deny, Dangerous, 8},
		{"the repository's history", "rm -rf .git", Deny, Dangerous, 8},
		{"a tree inside .git", "rm -rf .git/objects", Ask, Dangerous, 7},
		{"a stale lock in .git", "rm -f .git/index.lock", Ask, Caution, 5},
		{"a directory in the home", "rm -rf ~/Documents", Ask, Dangerous, 7},
		{"a system directory", "rm -rf /usr/local/lib/x", Ask, Dangerous, 7},
		{"another project", "rm -rf ../other", Ask, Dangerous, 7},
		{"a startup file", "rm -f ~/.bashrc", Ask, Dangerous, 7},
		{"one file outside", "rm ~/notes.txt", Ask, Dangerous, 6},
		{"a dynamic target", "rm -rf $DIR", Ask, Caution, 5},
		{"a quoted dynamic target", `rm -rf "$BUILD_DIR"`, Ask, Caution, 5},
		{"xargs input", "find . -name x | xargs rm -rf", Ask, Caution, 5},
		{"a dynamic target under the home", `rm -rf "$HOME/$X"`, Deny, Dangerous, 8},
		{"a dynamic target under /opt", "rm -rf /opt/apps/$APP", Ask, Dangerous, 7},
		{"build output", "rm -rf build/", Allow, SafeWrite, 2},
		{"node_modules", "rm -rf node_modules", Allow, SafeWrite, 2},
		{"object files", "rm -f *.o", Allow, SafeWrite, 2},
		{"everything in build", "rm -rf build/*", Allow, SafeWrite, 2},
		{"a file", "rm notes.txt", Allow, SafeWrite, 2},
		{"temp scratch", "rm -fr /tmp/scratch", Allow, SafeWrite, 2},
		{"the whole temp dir", "rm -rf /tmp/*", Ask, Caution, 5},
		{"no operand", "rm -rf", Allow, ReadOnly, 0},
		{"unlink outside", "unlink ~/x", Ask, Dangerous, 6},
		{"rm -i asks", "rm -i x", Allow, anyCat, anyRisk},
		{"flags after the operand", "rm / -rf", Deny, Forbidden, 10},
		{"separate flags", "rm -f -r /", Deny, Forbidden, 10},
		{"long flags", "rm --recursive --force /", Deny, Forbidden, 10},
		{"abbreviated long flags", "rm --rec --forc ~", Deny, Forbidden, 10},
		{"--force=true", "rm --force=true -r ~", Deny, Forbidden, 10},
		{"capital R", "rm -Rf /", Deny, Forbidden, 10},
		{"after --", "rm -rf -- /", Deny, Forbidden, 10},
		{"the worst of several", "rm -rf build ~/x /", Deny, Forbidden, 10},
	})
	checkKnown(t, []kcase{
		{"rmdir in the workspace", "rmdir build", Allow, SafeWrite, 1},
		{"rmdir a system directory", "rmdir /usr", Ask, Caution, 5},
		{"rmdir outside", "rmdir ~/old", Ask, Caution, 4},
	})
}

func TestKnownFind(t *testing.T) {
	checkKnown(t, []kcase{
		{"lists", "find . -name '*.go'", Allow, ReadOnly, 0},
		{"a name that looks like -delete", "find . -name -delete", Allow, ReadOnly, 0},
		{"deletes matches in the workspace", "find . -name '*.o' -delete", Allow, SafeWrite, 2},
		{"deletes matches in a subdirectory", "find build -type f -delete", Allow, SafeWrite, 2},
		{"deletes everything in the workspace", "find . -delete", Deny, Dangerous, 8},
		{"deletes every file in the workspace", "find . -type f -delete", Deny, Dangerous, 8},
		{"deletes under /", "find / -name '*.log' -delete", Deny, Forbidden, 10},
		{"deletes the home", "find ~ -delete", Deny, Forbidden, 10},
		{"deletes outside", "find ~/old -name '*.bak' -delete", Ask, Dangerous, 7},
		{"exec grep", "find . -name '*.go' -exec grep -l foo {} +", Allow, ReadOnly, 0},
		{"exec rm of matches", "find . -name '*.tmp' -exec rm {} \\;", Allow, SafeWrite, 2},
		{"exec rm of everything", "find . -type f -exec rm -f {} +", Deny, Dangerous, 8},
		{"exec rm -rf under /", "find / -exec rm -rf {} \\;", Deny, Forbidden, 10},
		{"exec rm of matches under /", "find / -name core -exec rm -f {} \\;", Ask, Dangerous, 7},
		{"exec sed -i", "find . -name '*.go' -exec sed -i s/a/b/ {} +", Allow, anyCat, anyRisk},
		{"exec a shell", "find . -exec sh -c 'rm -rf /' \\;", Deny, Forbidden, 10},
		{"execdir", "find . -execdir rm -rf ~ \\;", Deny, Forbidden, 10},
		{"fprint to a system file", "find . -fprint /etc/cron.d/x", Ask, Dangerous, 7},
		{"ok asks each time", "find . -name x -ok rm {} \\;", Allow, anyCat, anyRisk},
	})
	checkInteractive(t, []string{"find . -name x -ok rm {} \\;"}, true)
}

func TestKnownOverwrites(t *testing.T) {
	checkKnown(t, []kcase{
		{"shred a file", "shred -u secrets.txt", Ask, Dangerous, 7},
		{"shred a disk", "shred -n 1 /dev/sda", Deny, Forbidden, 10},
		{"truncate in the workspace", "truncate -s 0 app.log", Ask, Caution, 5},
		{"truncate outside", "truncate -s 0 ~/.bash_history", Ask, Dangerous, 7},
		{"dd to a disk", "dd if=/dev/zero of=/dev/sda bs=1M", Deny, Forbidden, 10},
		{"dd to an nvme disk", "dd if=x.img of=/dev/nvme0n1", Deny, Forbidden, 10},
		{"dd reads a disk", "dd if=/dev/sda of=disk.img", Ask, Caution, 5},
		{"dd between files", "dd if=a.bin of=b.bin bs=1k", Allow, anyCat, anyRisk},
		{"dd to a computed device", "dd if=x.img of=$DEV", Ask, Caution, 5},
		{"dd to stdout", "dd if=a.bin bs=1 count=4", Allow, ReadOnly, 1},
		{"mkfs on a device", "mkfs.ext4 /dev/sdb1", Deny, Forbidden, 10},
		{"mkfs -t", "mkfs -t ext4 /dev/sdb", Deny, Forbidden, 10},
		{"mkswap", "mkswap /dev/sda2", Deny, Forbidden, 10},
		{"mke2fs", "mke2fs /dev/vdb", Deny, Forbidden, 10},
		{"wipefs -a", "wipefs -a /dev/sda", Deny, Forbidden, 10},
		{"wipefs lists", "wipefs /dev/sda", Allow, ReadOnly, 1},
		{"mkfs on a computed device", "mkfs.xfs $DISK", Deny, Forbidden, 10},
		{"mkfs on an image in the workspace", "mkfs.ext4 disk.img", Ask, Caution, 5},
		{"mkfs on an image in the home", "mkfs.ext4 ~/disk.img", Ask, Dangerous, 7},
		{"fdisk -l", "fdisk -l", Allow, ReadOnly, 1},
		{"fdisk a disk", "fdisk /dev/sda", Deny, Forbidden, 9},
		{"sfdisk dump", "sfdisk -d /dev/sda", Allow, ReadOnly, 1},
		{"parted -l", "parted -l", Allow, ReadOnly, 1},
		{"parted print", "parted /dev/sda print", Allow, ReadOnly, 1},
		{"parted mklabel", "parted -s /dev/sda mklabel gpt", Deny, Forbidden, 9},
		{"sgdisk zap", "sgdisk --zap-all /dev/sda", Deny, Forbidden, 9},
		{"diskutil erase", "diskutil eraseDisk APFS X disk2", Deny, Forbidden, 10},
		{"diskutil list", "diskutil list", Allow, ReadOnly, 1},
	})
}

func TestKnownPermissions(t *testing.T) {
	checkKnown(t, []kcase{
		{"chmod -R the root", "chmod -R 777 /", Deny, Forbidden, 9},
		{"chown -R a system root", "chown -R me /usr", Deny, Forbidden, 9},
		{"chgrp -R the home", "chgrp -R staff ~", Deny, Forbidden, 9},
		{"chmod --recursive /etc", "chmod --recursive 755 /etc", Deny, Forbidden, 9},
		{"chmod a system file", "chmod 644 /etc/passwd", Ask, Dangerous, 7},
		{"chmod the home", "chmod 700 ~", Ask, Caution, 4},
		{"chmod +x in the workspace", "chmod +x run.sh", Allow, SafeWrite, 2},
		{"chmod -x is a mode", "chmod -x run.sh", Allow, SafeWrite, 2},
		{"chmod -R 777 in the workspace", "chmod -R 777 build", Ask, SafeWrite, 3},
		{"chmod outside", "chmod 600 ~/.ssh/id_rsa", Ask, Caution, 4},
		{"chmod a git hook", "chmod +x .git/hooks/pre-commit", Ask, Caution, 5},
		{"setuid", "chmod u+s ./tool", Ask, Caution, 5},
		{"chown in the workspace", "chown -R me:me src", Allow, SafeWrite, 2},
		{"sudo chmod a system file", "sudo chmod 777 /etc/shadow", Ask, Dangerous, 7},
	})
}

func TestKnownMovesAndCopies(t *testing.T) {
	checkKnown(t, []kcase{
		{"mv in the workspace", "mv a.txt b.txt", Allow, SafeWrite, 2},
		{"mv a glob in the workspace", "mv *.txt docs/", Allow, SafeWrite, 2},
		{"mv onto a startup file", "mv x ~/.bashrc", Ask, Dangerous, 7},
		{"mv the repository's history", "mv .git /tmp/g", Ask, Dangerous, 7},
		{"mv into a system directory", "mv x /etc/", Ask, Dangerous, 7},
		{"mv a system file away", "sudo mv /etc/hosts /tmp/", Ask, Dangerous, 7},
		{"mv the workspace", "mv /home/u/proj /tmp/p", Ask, Dangerous, 7},
		{"mv to another project", "mv x ../other/", Ask, Caution, 4},
		{"mv -t", "mv -t /usr/bin tool", Ask, Dangerous, 7},
		{"cp in the workspace", "cp -r src dst", Allow, SafeWrite, 1},
		{"cp to a git hook", "cp hook.sh .git/hooks/pre-commit", Ask, Dangerous, 7},
		{"cp onto a disk", "cp x.img /dev/sda", Deny, Forbidden, 10},
		{"cp onto a startup file", "cp evil ~/.bashrc", Ask, Dangerous, 7},
		{"cp outside", "cp -r src ~/backup", Ask, Caution, 4},
		{"cp -t", "cp -t ~/.ssh key", Ask, anyCat, anyRisk},
		{"install into /usr/local/bin", "install -m 755 tool /usr/local/bin/tool", Ask, Dangerous, 7},
		{"install -d in the workspace", "install -d out/bin", Allow, SafeWrite, 1},
		{"ln in the workspace", "ln -s /etc/passwd link", Allow, SafeWrite, 1},
		{"ln onto a startup file", "ln -sf x ~/.bashrc", Ask, Dangerous, 7},
		{"tee in the workspace", "echo x | tee out.txt", Allow, SafeWrite, 1},
		{"tee -a a startup file", "echo x | tee -a ~/.bashrc", Ask, Dangerous, 7},
		{"sudo tee a system file", "echo x | sudo tee /etc/hosts", Ask, Dangerous, 7},
		{"tee a disk", "cat x.img | tee /dev/sda", Deny, Forbidden, 10},
		{"rsync in the workspace", "rsync -a src/ backup/", Allow, SafeWrite, 1},
		{"rsync --delete in the workspace", "rsync -a --delete src/ dist/", Allow, SafeWrite, 2},
		{"rsync --delete outside", "rsync -a --delete src/ ~/backup/", Ask, Dangerous, 7},
		{"rsync --del outside", "rsync -a --del src/ /srv/www/", Ask, Dangerous, 7},
		{"rsync to a remote", "rsync -a src/ host:/srv/", Ask, Caution, 4},
		{"rsync -e runs a shell", `rsync -e 'sh -c "rm -rf ~"' a b`, Deny, Forbidden, 10},
		{"scp from a remote", "scp host:/etc/motd .", Ask, Caution, 3},
		{"scp onto a startup file", "scp host:rc ~/.bashrc", Ask, Dangerous, 7},
	})
}

func TestKnownSed(t *testing.T) {
	checkKnown(t, []kcase{
		{"prints", "sed 's/a/b/' x.go", Allow, ReadOnly, 0},
		{"-i in the workspace", "sed -i 's/a/b/' x.go", Allow, SafeWrite, 1},
		{"-i with a suffix", "sed -i.bak 's/a/b/' x.go", Allow, SafeWrite, 1},
		{"-ie is -i with suffix e", "sed -ie 's/a/b/' x.go", Allow, SafeWrite, 1},
		{"BSD -i ''", "sed -i '' 's/a/b/' x.go", Allow, SafeWrite, 1},
		{"--in-place", "sed --in-place -e 's/a/b/' x.go", Allow, SafeWrite, 1},
		{"-i a system file", "sed -i 's/a/b/' /etc/hosts", Ask, Dangerous, 7},
		{"-i a startup file", "sed -i '$a alias ls=rm' ~/.bashrc", Ask, Dangerous, 7},
		{"-n -i", "sed -ni 's/a/b/p' ~/.zshrc", Ask, Dangerous, 7},
		{"the e flag runs commands", "sed 's/.*/echo hi/e' x", Ask, Caution, 5},
		{"the e command runs commands", "sed '1e id' x", Ask, Caution, 5},
		{"the w command writes a file", "sed 'w /etc/cron.d/x' x", Ask, Dangerous, 7},
		{"s///w writes a file", "sed 's/a/b/w ~/.bashrc' x", Ask, anyCat, anyRisk},
	})
}

// rm in $TMPDIR or /tmp says in its reason that the sandbox's temporary
// directory is the run's own; the verdict does not change on that alone.
func TestPrivateTmpReason(t *testing.T) {
	e := New(nil)
	for line, want := range map[string]Action{
		`rm -rf "$TMPDIR/build"`: Ask,
		"rm -rf /tmp/*":          Ask,
		`rm -rf "${TMPDIR}"/x`:   Ask,
	} {
		d := e.DecideLine(knownCtx, line)
		if d.Action != want || !strings.Contains(strings.Join(d.Commands[0].Reasons, "; "), "private temporary directory") {
			t.Errorf("Decide(%q) = %v %q, want %v and a reason naming the private temporary directory", line, d.Action, d.Commands[0].Reasons, want)
		}
	}
	if d := e.DecideLine(knownCtx, `rm -rf "$BUILD/x"`); strings.Contains(d.Commands[0].Reasons[0], "private") {
		t.Errorf("Decide(rm -rf \"$BUILD/x\") mentions the private temporary directory: %q", d.Commands[0].Reasons)
	}
}
