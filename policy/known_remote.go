package policy

import (
	"path"
	"strings"
)

// remoteKnowledge covers programs whose name says little: build tools
// whose tasks publish, jar command lines, and names two programs share
// (MinIO's mc and Midnight Commander, Split.io's split and coreutils').
func remoteKnowledge(name string) func(*judge, *Command) {
	switch name {
	case "make", "gmake":
		return judgeMake
	case "mvn", "mvnw", "mvnd":
		return judgeMaven
	case "gradle", "gradlew":
		return judgeGradle
	case "java":
		return judgeJava
	case "mc":
		return judgeMc
	case "split":
		return judgeSplit
	case "rg":
		return judgeRg
	}
	return nil
}

// judgeMake: make -C DIR and make -f FILE run another directory's
// Makefile; --eval runs make code given on the line.
func judgeMake(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "CfIjloW", long: " directory file makefile include-dir jobs load-average old-file " +
		"assume-old what-if new-file assume-new eval "})
	for _, o := range s.opts {
		switch {
		case o.is("-C") || o.is("--directory"):
			dir := Arg{Value: o.val, Static: !o.dynamic, IfEmpty: o.val}
			if p := j.place(dir); !inProject(p) {
				j.add(Caution, 4, "%s -C runs the Makefile of %s (%s)", c.Name, o.val, p)
			}
			j.ctx = j.ctx.chdirTo(dir)
		case o.is("-f") || o.is("--file") || o.is("--makefile"):
			if p := j.place(Arg{Value: o.val, Static: !o.dynamic, IfEmpty: o.val}); !inProject(p) {
				j.add(Caution, 4, "%s -f runs the Makefile %s (%s)", c.Name, o.val, p)
			}
		case o.is("--eval"):
			j.add(Caution, 4, "%s --eval runs make code given on the line", c.Name)
		}
	}
	j.projectCode("%s builds, tests or checks the project, running the project's own code", c.Name)
}

// inProject reports whether a place is the project's own or scratch.
func inProject(p Place) bool {
	return p == PlaceWorkspace || p == PlaceWorkspaceRoot || p == PlaceTemp || p == PlaceTempRoot
}

// mavenValues are Maven's options that take the next word.
var mavenValues = map[string]bool{"-f": true, "--file": true, "-s": true, "--settings": true, "-gs": true,
	"--global-settings": true, "-P": true, "--activate-profiles": true, "-pl": true, "--projects": true, "-rf": true,
	"--resume-from": true, "-T": true, "--threads": true, "-l": true, "--log-file": true, "-b": true, "--builder": true,
	"-t": true, "--toolchains": true, "-gt": true, "--global-toolchains": true, "-D": true, "--define": true}

// gradleValues are Gradle's options that take the next word.
var gradleValues = map[string]bool{"-x": true, "--exclude-task": true, "-p": true, "--project-dir": true, "-b": true,
	"--build-file": true, "-c": true, "--settings-file": true, "-g": true, "--gradle-user-home": true, "-I": true,
	"--init-script": true, "-D": true, "--system-prop": true, "-P": true, "--project-prop": true, "--console": true,
	"--warning-mode": true, "--max-workers": true, "--priority": true, "--include-build": true, "-M": true,
	"--write-verification-metadata": true, "--dependency-verification": true, "-F": true}

// tasks returns the goals or tasks a build tool is asked to run: the
// words that are not options or their values.
func tasks(args []Arg, values map[string]bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case values[v]:
			i++
		case strings.HasPrefix(v, "-"):
		default:
			out = append(out, v)
		}
	}
	return out
}

// remoteTask reports whether a Maven goal or Gradle task sends the build
// somewhere: a repository, a registry, a server, the source control.
func remoteTask(t string, maven bool) bool {
	l := strings.ToLower(t)
	if !maven {
		l = l[strings.LastIndexByte(l, ':')+1:] // :app:publish
	}
	switch {
	case strings.HasSuffix(l, "local") || strings.Contains(l, "tomavenlocal"):
		return false
	case strings.Contains(l, "publish") || strings.Contains(l, "upload") || strings.Contains(l, "deploy") ||
		strings.Contains(l, "push"):
		return true
	case maven:
		return strings.HasPrefix(l, "release:") && l != "release:clean" || l == "scm:checkin" || l == "scm:tag" ||
			l == "jib:build" || strings.HasPrefix(l, "nexus-staging:") && !strings.HasSuffix(l, ":help")
	}
	return l == "release" || l == "jib" || strings.Contains(l, "releaserepository") || strings.Contains(l, "closeandrelease")
}

// judgeMaven: mvn deploy and release:perform publish under the user's
// account, like npm publish; ./mvnw is the project's wrapper of mvn.
func judgeMaven(j *judge, c *Command) {
	for _, t := range tasks(c.Rest(), mavenValues) {
		if remoteTask(t, true) {
			j.reach(Caution, 5, "%s %s publishes to a remote repository or source control under the user's account", c.Name, t)
			return
		}
	}
	j.projectCode("%s builds, tests or checks the project, running the project's own code", c.Name)
}

// judgeGradle: gradle publish, ./gradlew publishPlugins and other
// publishing, upload and deploy tasks act on remote repositories.
func judgeGradle(j *judge, c *Command) {
	for _, t := range tasks(c.Rest(), gradleValues) {
		if remoteTask(t, false) {
			j.reach(Caution, 5, "%s %s publishes to a remote repository or server under the user's account", c.Name, t)
			return
		}
	}
	j.projectCode("%s builds, tests or checks the project, running the project's own code", c.Name)
}

// destructiveVerbs start the subcommands of jar command lines that
// destroy something (jenkins-cli delete-job, safe-shutdown, ...).
var destructiveVerbs = []string{"delete", "remove", "destroy", "drop", "purge", "wipe", "kill", "shutdown",
	"safe-shutdown", "restart", "safe-restart", "uninstall", "truncate", "reset", "disconnect", "erase", "clear", "rm"}

// judgeJava: java -jar FILE ARGS runs the jar's program; a jar command
// line given a destructive subcommand asks, and jenkins-cli acts on a
// Jenkins server.
func judgeJava(j *judge, c *Command) {
	args := c.Rest()
	jar := -1
	for i, a := range args {
		if a.Value == "-jar" && i+1 < len(args) {
			jar = i + 1
			break
		}
		if !strings.HasPrefix(a.Value, "-") {
			break
		}
	}
	if jar < 0 {
		j.projectCode("java runs a Java program")
		return
	}
	name := strings.ToLower(path.Base(args[jar].Value))
	for _, a := range args[jar+1:] {
		v := strings.ToLower(a.Value)
		if strings.HasPrefix(v, "-") {
			continue
		}
		for _, d := range destructiveVerbs {
			if v == d || strings.HasPrefix(v, d+"-") || strings.HasPrefix(v, d+"_") {
				j.add(Dangerous, 6, "java -jar %s %s: a destructive subcommand of the jar's command line", name, a.Value)
				return
			}
		}
	}
	if strings.Contains(name, "jenkins-cli") {
		if sub := firstOperand(args[jar+1:], " s auth http webSocket i p user noCertificateCheck noKeyAuth strictHostKey logger "); readVerb(sub) {
			j.add(ReadOnly, 1, "java -jar %s %s reads from a Jenkins server", name, sub)
		} else {
			j.add(Caution, 5, "java -jar %s %s acts on a Jenkins server", name, sub)
		}
		return
	}
	j.add(SafeWrite, 2, "java runs a Java program")
}

// firstOperand is the first word that is neither an option nor the value
// of one of the options named in values (" s auth ").
func firstOperand(args []Arg, values string) string {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case strings.HasPrefix(v, "-") && strings.Contains(values, " "+strings.TrimLeft(v, "-")+" "):
			i++
		case strings.HasPrefix(v, "-"):
		default:
			return v
		}
	}
	return ""
}

// readVerb reports whether a subcommand only reads: list-jobs, get-node,
// who-am-i, help, version.
func readVerb(v string) bool {
	for _, p := range []string{"list", "get", "ls", "show", "describe", "info", "stat", "who-am-i", "whoami", "help", "version", "console"} {
		if v == p || strings.HasPrefix(v, p+"-") {
			return true
		}
	}
	return false
}

// minioSubs are the subcommands of MinIO's client: what tells mc ls
// bucket from Midnight Commander opening a directory.
var minioSubs = map[string]byte{
	// r: reads, w: changes objects or settings remotely, d: destroys.
	"ls": 'r', "cat": 'r', "head": 'r', "stat": 'r', "du": 'r', "diff": 'r', "find": 'r', "tree": 'r', "ping": 'r',
	"ready": 'r', "version": 'r', "sql": 'r', "watch": 'r', "share": 'r', "license": 'r', "get": 'r',
	"cp": 'w', "put": 'w', "pipe": 'w', "mb": 'w', "mirror": 'w', "mv": 'w', "tag": 'w', "retention": 'w',
	"legalhold": 'w', "anonymous": 'w', "policy": 'w', "encrypt": 'w', "event": 'w', "ilm": 'w', "replicate": 'w',
	"quota": 'w', "idp": 'w', "admin": 'w', "od": 'w', "batch": 'w', "support": 'w', "undo": 'w', "update": 'w',
	"alias": 'w', "config": 'w', "cors": 'w', "version-enable": 'w',
	"rb": 'd', "rm": 'd',
}

// judgeMc tells MinIO's client from Midnight Commander by its first
// operand; a directory named like a MinIO subcommand is read the worse
// way, as MinIO.
func judgeMc(j *judge, c *Command) {
	var ops []Arg
	for _, a := range c.Rest() {
		if !strings.HasPrefix(a.Value, "-") {
			ops = append(ops, a)
		}
	}
	kind := byte(0)
	if len(ops) > 0 {
		kind = minioSubs[ops[0].Value]
	}
	if kind == 0 {
		j.add(Interactive, 1, "interactive: mc (Midnight Commander) waits for a person at the terminal")
		return
	}
	sub := ops[0].Value
	for _, a := range c.Rest() {
		v := a.Value
		if v == "--remove" || v == "remove" || v == "rm" && sub != "rm" || v == "delete" || v == "clear" || v == "reset" ||
			v == "--purge" || v == "purge" || v == "--overwrite" && sub == "mirror" {
			kind = 'd'
		}
	}
	switch {
	case kind == 'd':
	case (sub == "admin" || sub == "alias" || sub == "config") && len(ops) > 1 && (readVerb(ops[1].Value) ||
		len(ops) > 2 && readVerb(ops[2].Value)):
		kind = 'r' // mc admin info, mc admin user list, mc alias list
	case (sub == "cp" || sub == "get") && len(ops) > 2 && localPath(ops[len(ops)-1].Value):
		// A download: the local copy is a write in the project.
		j.add(SafeWrite, 2, "mc %s (MinIO client) copies from an object store to %s", sub, ops[len(ops)-1].Value)
		j.write(ops[len(ops)-1], "mc "+sub)
		return
	}
	switch kind {
	case 'd':
		j.add(Dangerous, 6, "mc %s (MinIO client) deletes objects, buckets or settings on an object store", sub)
	case 'w':
		j.add(Caution, 5, "mc %s (MinIO client) changes objects or settings on an object store", sub)
	default:
		j.add(ReadOnly, 1, "mc %s (MinIO client) reads from an object store over the network", sub)
	}
}

// localPath reports whether an mc operand names a local file rather than
// ALIAS/BUCKET: a path that starts like one, or a bare name.
func localPath(v string) bool {
	return strings.HasPrefix(v, ".") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || !strings.Contains(v, "/")
}

// splitioNouns are the resources of Split.io's command line.
var splitioNouns = map[string]bool{"splits": true, "split": true, "environments": true, "environment": true,
	"segments": true, "segment": true, "traffic-types": true, "workspaces": true, "definitions": true,
	"attributes": true, "users": true, "groups": true, "api-keys": true, "flag-sets": true, "metrics": true,
	"rollout": true, "accounts": true, "tags": true}

// judgeSplit tells Split.io's split (split splits delete NAME) from
// coreutils split (split [OPTION]... [FILE [PREFIX]]): coreutils takes at
// most two operands, so a third, or a Split.io noun followed by a verb,
// is Split.io; a verb like delete or kill reads the worse way.
func judgeSplit(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "abClnt", long: " suffix-length additional-suffix bytes line-bytes lines number " +
		"separator filter "})
	if f, ok := s.val("--filter"); ok {
		// coreutils split --filter=COMMAND writes each piece to $SHELL -c COMMAND.
		j.shell(f, true, "split --filter")
	}
	var ops []string
	for _, a := range s.ops {
		ops = append(ops, a.Value)
	}
	splitio := len(ops) > 2 || len(ops) > 1 && splitioNouns[ops[0]]
	if !splitio {
		j.add(SafeWrite, 2, "split writes the pieces of a file")
		return
	}
	for _, v := range ops {
		switch v {
		case "delete", "kill", "remove", "rm", "archive":
			j.add(Dangerous, 6, "split %s (Split.io) deletes or kills feature flags in production", v)
			return
		case "create", "update", "add", "restore", "set", "edit", "patch":
			j.add(Caution, 5, "split %s (Split.io) changes feature flags", v)
			return
		}
	}
	j.add(ReadOnly, 1, "split (Split.io) reads feature flags over the network")
}

// judgeRg: rg --pre PROGRAM runs PROGRAM on every file it searches, and
// --hostname-bin PROGRAM once for the host's name.
func judgeRg(j *judge, c *Command) {
	args := c.Rest()
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		var prog Arg
		switch {
		case (v == "--pre" || v == "--hostname-bin") && i+1 < len(args):
			prog = args[i+1]
			i++
		case strings.HasPrefix(v, "--pre="):
			prog = valArg(args[i], v[len("--pre="):])
		case strings.HasPrefix(v, "--hostname-bin="):
			prog = valArg(args[i], v[len("--hostname-bin="):])
		case v == "--":
			i = len(args)
			continue
		default:
			continue
		}
		if prog.Value == "" {
			continue // --pre= turns it off
		}
		j.add(ReadOnly, 0, "rg runs %s", prog.Value)
		j.argv([]Arg{prog, {Value: "<file searched by rg>", IfEmpty: ""}}, "rg "+strings.SplitN(v, "=", 2)[0])
	}
	j.add(ReadOnly, 0, "rg only reads or prints")
}

// secretNames are parts of variable names that hold secrets.
var secretNames = []string{"SECRET", "TOKEN", "PASSW", "KEY", "CRED", "AUTH", "PRIVATE"}

// judgeQuery: lookups and probes. A name built by a command substitution
// ($(cat ~/.ssh/id_rsa | base64).evil.example) or from a secret variable
// carries data out in the DNS query itself, sandbox network or not.
func judgeQuery(j *judge, c *Command) {
	for _, a := range c.Rest() {
		switch {
		case len(a.Runs) > 0:
			j.add(Caution, 5, "%s looks up a name built from the output of %s: the query carries it to a DNS server",
				c.Name, strings.Join(a.Runs, ", "))
			return
		case !a.Static && secretWord(a.Value):
			j.add(Caution, 5, "%s looks up a name built from %s: the query carries it to a DNS server", c.Name, a.Value)
			return
		}
	}
	j.add(ReadOnly, 1, "%s queries the network", c.Name)
}

func secretWord(v string) bool {
	u := strings.ToUpper(v)
	for _, s := range secretNames {
		if strings.Contains(u, s) {
			return true
		}
	}
	return false
}
