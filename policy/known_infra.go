package policy

import (
	"strings"
)

// dockerRunValues are the long options of docker run and create that
// take a value; the first operand after the options is the image.
const dockerRunValues = " add-host annotation attach blkio-weight blkio-weight-device cap-add cap-drop cgroup-parent cgroupns cidfile " +
	"cpu-count cpu-percent cpu-period cpu-quota cpu-rt-period cpu-rt-runtime cpu-shares cpus cpuset-cpus cpuset-mems device " +
	"device-cgroup-rule device-read-bps device-read-iops device-write-bps device-write-iops detach-keys dns dns-option " +
	"dns-search domainname entrypoint env env-file expose gpus group-add health-cmd health-interval health-retries " +
	"health-start-interval health-start-period health-timeout hostname ip ip6 ipc isolation kernel-memory label label-file " +
	"link link-local-ip log-driver log-opt mac-address memory memory-reservation memory-swap memory-swappiness mount name " +
	"network net network-alias net-alias oom-score-adj pid pids-limit platform publish pull restart runtime security-opt " +
	"shm-size stop-signal stop-timeout storage-opt sysctl tmpfs ulimit user userns uts volume volume-driver volumes-from workdir "

// judgeDocker: containers are isolated until an option hands them the
// host; deleting volumes deletes data.
func judgeDocker(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "cHl", long: " config context host log-level tlscacert tlscert tlskey ", stop: true})
	ops := s.ops
	if strings.HasSuffix(c.Name, "-compose") {
		ops = append([]Arg{staticArg("compose")}, ops...)
	}
	if len(ops) == 0 {
		j.add(ReadOnly, 0, "%s prints its usage", c.Name)
		return
	}
	verb, rest := ops[0].Value, ops[1:]
	sub := ""
	switch verb {
	case "container", "image", "volume", "network", "system", "builder", "buildx", "context", "plugin", "compose", "manifest", "trust", "secret", "config", "service", "stack", "swarm", "node":
		r := scan(rest, flags{short: "fp", long: " file project-name profile env-file project-directory ", stop: true})
		if len(r.ops) > 0 {
			sub, rest = r.ops[0].Value, r.ops[1:]
		}
		switch {
		case verb == "container" && sub != "prune" && sub != "ls" && sub != "list":
			verb, sub = sub, ""
		case verb == "image" && (sub == "rm" || sub == "remove"):
			verb, sub = "rmi", ""
		case verb == "image" && (sub == "build" || sub == "pull" || sub == "push" || sub == "history" || sub == "inspect"):
			verb, sub = sub, ""
		case verb == "buildx" && sub == "build":
			verb, sub = "build", ""
		}
	}
	o := scan(rest, flags{short: "aceghlmpuvwfn", long: dockerRunValues + "filter format since until tail ", stop: verb == "run" || verb == "create" || verb == "exec"})
	force := o.has("-f", "--force")
	switch verb {
	case "system":
		if sub == "prune" {
			j.reach(Dangerous, 7, "docker system prune deletes stopped containers, unused images and networks (and volumes with --volumes)")
			return
		}
		j.add(ReadOnly, 0, "docker system %s only reports", sub)
	case "volume":
		switch sub {
		case "rm", "remove", "prune":
			j.reach(Dangerous, 7, "docker volume %s deletes volumes and the data in them", sub)
		case "create":
			j.add(SafeWrite, 2, "docker volume create makes a volume")
		default:
			j.add(ReadOnly, 0, "docker volume %s only reports", sub)
		}
	case "image", "container", "network", "builder", "context", "buildx", "plugin", "manifest", "trust", "secret", "config", "service", "stack", "swarm", "node":
		switch sub {
		case "prune", "rm", "remove":
			j.reach(Caution, 5, "docker %s %s deletes what is unused", verb, sub)
		case "ls", "list", "inspect", "history", "":
			j.add(ReadOnly, 0, "docker %s %s only reports", verb, sub)
		default:
			j.reach(Caution, 3, "docker %s %s is a subcommand forgebox does not know", verb, sub)
		}
	case "compose":
		dockerCompose(j, sub, o)
	case "rm":
		if force || o.has("-v", "--volumes") {
			j.reach(Dangerous, 6, "docker rm -f kills and deletes containers, with their data")
			return
		}
		j.reach(Caution, 4, "docker rm deletes stopped containers")
	case "rmi":
		if force {
			j.reach(Dangerous, 6, "docker rmi -f deletes images even when containers use them")
			return
		}
		j.reach(Caution, 4, "docker rmi deletes images")
	case "run", "create":
		dockerRun(j, o)
	case "exec":
		if o.has("--privileged") {
			j.reach(Dangerous, 7, "docker exec --privileged runs a command with full access to the host")
		}
		if o.has("-i", "--interactive") && o.has("-t", "--tty") {
			j.add(Interactive, 2, "interactive: docker exec -it attaches a terminal")
		}
		j.reach(Caution, 3, "docker exec runs a command in a running container")
	case "ps", "images", "inspect", "version", "info", "top", "port", "diff", "history", "search", "ls":
		j.add(ReadOnly, 0, "docker %s only reports", verb)
	case "logs", "events", "stats":
		if o.has("-f", "--follow") || verb == "events" || verb == "stats" && !o.has("--no-stream") {
			j.add(Interactive, 1, "interactive: docker %s follows until it is interrupted", verb)
			return
		}
		j.add(ReadOnly, 0, "docker %s only reports", verb)
	case "build":
		j.add(SafeWrite, 2, "docker build builds an image")
	case "pull":
		j.reach(Caution, 3, "docker pull downloads an image")
	case "push", "login", "logout":
		j.reach(Caution, 4, "docker %s acts on a registry under the user's account", verb)
	case "attach":
		j.add(Interactive, 2, "interactive: docker attach connects the terminal to a container")
	case "cp":
		j.reach(Caution, 3, "docker cp copies files between a container and the host")
		if n := len(o.ops); n > 1 && !strings.Contains(o.ops[n-1].Value, ":") {
			j.write(o.ops[n-1], "docker cp")
		}
	default:
		j.reach(Caution, 4, "docker %s changes containers", verb)
	}
}

// dockerRun: the options that hand the container the host.
func dockerRun(j *judge, o scanned) {
	for _, opt := range o.opts {
		v := opt.val
		switch {
		case opt.long == "privileged":
			j.reach(Dangerous, 7, "docker run --privileged gives the container full access to the host")
		case opt.short == 'v' || opt.long == "volume" || opt.long == "mount":
			src, _, _ := strings.Cut(v, ":")
			if opt.long == "mount" {
				src = ""
				for _, kv := range strings.Split(v, ",") {
					if k, val, _ := strings.Cut(kv, "="); k == "source" || k == "src" {
						src = val
					}
				}
			}
			if !strings.HasPrefix(src, "/") && !strings.HasPrefix(src, "~") && !strings.HasPrefix(src, ".") {
				continue
			}
			switch p := j.place(homeArg(j, src)); {
			case strings.HasSuffix(src, "docker.sock"):
				j.reach(Dangerous, 7, "docker run mounts %s: the container controls docker, and so the host", src)
			case p == PlaceRoot || p == PlaceSystemRoot || p == PlaceHomeRoot || p == PlaceSystem || p == PlaceStartup || p == PlaceDisk:
				j.reach(Dangerous, 7, "docker run mounts the host's %s into the container", src)
			}
		case opt.long == "pid" || opt.long == "net" || opt.long == "network" || opt.long == "ipc" || opt.long == "uts" || opt.long == "userns" || opt.long == "cgroupns":
			if v == "host" {
				j.reach(Caution, 5, "docker run shares the host's %s namespace", opt.long)
			}
		case opt.long == "cap-add":
			if u := strings.ToUpper(v); u == "ALL" || strings.Contains(u, "SYS_ADMIN") || strings.Contains(u, "SYS_MODULE") || strings.Contains(u, "SYS_PTRACE") {
				j.reach(Dangerous, 7, "docker run --cap-add %s gives the container power over the host", v)
			} else {
				j.reach(Caution, 5, "docker run --cap-add %s", v)
			}
		case opt.long == "security-opt":
			if strings.Contains(v, "unconfined") || strings.Contains(v, "disable") {
				j.reach(Dangerous, 6, "docker run --security-opt %s turns a protection off", v)
			}
		case opt.long == "device":
			j.reach(Caution, 5, "docker run gives the container the host device %s", v)
		}
	}
	if o.has("-i", "--interactive") && o.has("-t", "--tty") && !o.has("-d", "--detach") {
		j.add(Interactive, 2, "interactive: docker run -it attaches a terminal")
	}
	image := "an image"
	if len(o.ops) > 0 {
		image = o.ops[0].Value
	}
	j.reach(Caution, 4, "docker run starts a container from %s", image)
}

func dockerCompose(j *judge, sub string, o scanned) {
	switch sub {
	case "down":
		if o.has("-v", "--volumes") {
			j.reach(Dangerous, 7, "docker compose down -v deletes the project's volumes and their data")
			return
		}
		j.reach(Caution, 4, "docker compose down stops and removes the project's containers")
	case "ps", "config", "ls", "images", "top", "version", "port", "":
		j.add(ReadOnly, 0, "docker compose %s only reports", sub)
	case "logs":
		if o.has("-f", "--follow") {
			j.add(Interactive, 1, "interactive: docker compose logs -f follows until it is interrupted")
			return
		}
		j.add(ReadOnly, 0, "docker compose logs only reports")
	case "build":
		j.add(SafeWrite, 2, "docker compose build builds the project's images")
	case "pull":
		j.reach(Caution, 3, "docker compose pull downloads images")
	case "exec", "run":
		j.reach(Caution, 4, "docker compose %s runs a command in a service's container", sub)
	default:
		j.reach(Caution, 4, "docker compose %s changes the project's containers", sub)
	}
}

// judgeKube: kubectl and helm act on a cluster, which is shared and often
// in production: deleting is dangerous, changing is asked about.
func judgeKube(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "nslfocp", long: " namespace context kubeconfig server cluster user selector filename output container field-selector kube-context "})
	verb, sub := "", ""
	if len(s.ops) > 0 {
		verb = s.ops[0].Value
	}
	if len(s.ops) > 1 {
		sub = s.ops[1].Value
	}
	if c.Name == "helm" {
		switch verb {
		case "uninstall", "delete", "del", "un":
			j.reach(Dangerous, 7, "helm %s removes a release and its resources from the cluster", verb)
		case "install", "upgrade", "rollback":
			j.reach(Caution, 5, "helm %s changes what runs in the cluster", verb)
		case "list", "ls", "status", "get", "show", "inspect", "template", "search", "history", "version", "lint", "env", "verify", "":
			j.add(ReadOnly, 0, "helm %s only reports", verb)
		default:
			j.reach(Caution, 3, "helm %s is a subcommand forgebox does not know", verb)
		}
		return
	}
	switch verb {
	case "delete":
		j.reach(Dangerous, 7, "%s delete deletes cluster resources", c.Name)
	case "drain":
		j.reach(Dangerous, 6, "%s drain evicts every pod from a node", c.Name)
	case "apply", "replace", "create", "patch", "set", "scale", "label", "annotate", "taint", "autoscale", "expose", "run", "cordon", "uncordon", "certificate":
		j.reach(Caution, 5, "%s %s changes the cluster", c.Name, verb)
	case "rollout":
		if sub == "status" || sub == "history" {
			j.add(ReadOnly, 0, "%s rollout %s only reports", c.Name, sub)
			return
		}
		j.reach(Caution, 5, "%s rollout %s changes the cluster", c.Name, sub)
	case "edit":
		j.add(Interactive, 2, "interactive: %s edit opens an editor", c.Name)
		j.reach(Caution, 5, "%s edit changes the cluster", c.Name)
	case "exec", "attach":
		if s.has("-i", "--stdin") && s.has("-t", "--tty") {
			j.add(Interactive, 2, "interactive: %s %s -it attaches a terminal", c.Name, verb)
		}
		j.reach(Caution, 4, "%s %s runs a command in a pod", c.Name, verb)
	case "get", "describe", "logs", "top", "explain", "api-resources", "api-versions", "version", "cluster-info", "diff", "auth", "wait", "events", "":
		if s.has("-f", "--follow", "-w", "--watch") && verb != "diff" {
			j.add(Interactive, 1, "interactive: %s %s follows until it is interrupted", c.Name, verb)
			return
		}
		j.add(ReadOnly, 0, "%s %s only reports", c.Name, verb)
	case "config":
		switch {
		case sub == "view" || strings.HasPrefix(sub, "get-") || sub == "current-context":
			j.add(ReadOnly, 0, "%s config %s only reports", c.Name, sub)
		case strings.HasPrefix(sub, "delete-") || sub == "unset":
			j.reach(Caution, 4, "%s config %s removes cluster credentials or contexts", c.Name, sub)
		default:
			j.reach(Caution, 3, "%s config %s changes which cluster is used", c.Name, sub)
		}
	default:
		j.reach(Caution, 4, "%s %s acts on the cluster", c.Name, verb)
	}
}

// judgeInfra: terraform, tofu and pulumi change real infrastructure; an
// apply that skips the plan's approval is asked about every time.
func judgeInfra(j *judge, c *Command) {
	var ops []string
	auto, destroy := false, false
	for _, a := range c.Rest() {
		v := strings.TrimPrefix(a.Value, "-")
		switch {
		case v == "-auto-approve" || v == "auto-approve" || strings.HasPrefix(v, "auto-approve=") && !strings.HasSuffix(v, "=false"),
			v == "yes" || v == "y" || v == "-yes" || v == "-skip-preview":
			auto = true
		case v == "destroy" && a.Value != "destroy" || v == "-destroy":
			destroy = true
		case !strings.HasPrefix(a.Value, "-"):
			ops = append(ops, a.Value)
		}
	}
	verb, sub := "", ""
	if len(ops) > 0 {
		verb = ops[0]
	}
	if len(ops) > 1 {
		sub = ops[1]
	}
	switch {
	case verb == "destroy" || verb == "down" || verb == "stack" && sub == "rm":
		j.reach(Dangerous, 7, "%s %s destroys the infrastructure it manages", c.Name, verb)
	case (verb == "apply" || verb == "up" || verb == "update") && destroy:
		j.reach(Dangerous, 7, "%s %s -destroy destroys the infrastructure it manages", c.Name, verb)
	case (verb == "apply" || verb == "up" || verb == "update") && auto:
		j.reach(Dangerous, 7, "%s %s changes real infrastructure without asking for approval of the plan", c.Name, verb)
	case verb == "apply" || verb == "up" || verb == "update":
		j.add(Interactive, 2, "interactive: %s %s asks for approval at the terminal", c.Name, verb)
		j.reach(Caution, 5, "%s %s changes real infrastructure", c.Name, verb)
	case verb == "plan" || verb == "preview" || verb == "init" || verb == "get" || verb == "test":
		j.reach(Caution, 3, "%s %s reads remote state and runs providers", c.Name, verb)
	case verb == "fmt":
		j.add(SafeWrite, 2, "%s fmt formats the configuration", c.Name)
	case verb == "import" || verb == "taint" || verb == "untaint" || verb == "force-unlock" || verb == "refresh" || verb == "cancel" ||
		verb == "state" && (sub == "rm" || sub == "mv" || sub == "push" || sub == "replace-provider"):
		j.reach(Caution, 5, "%s %s changes the recorded state of the infrastructure", c.Name, verb)
	case verb == "workspace" && sub == "delete":
		j.reach(Dangerous, 6, "%s workspace delete deletes a workspace's state", c.Name)
	case verb == "console":
		j.add(Interactive, 1, "interactive: %s console waits for input", c.Name)
	case verb == "login" || verb == "logout":
		j.reach(Caution, 4, "%s %s changes stored credentials", c.Name, verb)
	case verb == "validate" || verb == "version" || verb == "show" || verb == "output" || verb == "graph" || verb == "providers" ||
		verb == "state" || verb == "workspace" || verb == "config" || verb == "whoami" || verb == "about" || verb == "logs" || verb == "":
		j.add(ReadOnly, 0, "%s %s only reports", c.Name, verb)
	default:
		j.reach(Caution, 4, "%s %s is a subcommand forgebox does not know", c.Name, verb)
	}
}
