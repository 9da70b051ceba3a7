package policy

import (
	"strings"
	"testing"
)

func TestKnownPower(t *testing.T) {
	checkKnown(t, []kcase{
		{"shutdown", "shutdown -h now", Deny, Forbidden, 9},
		{"shutdown cancelled", "shutdown -c", Ask, Caution, 3},
		{"reboot", "reboot", Deny, Forbidden, 9},
		{"poweroff", "poweroff", Deny, Forbidden, 9},
		{"halt", "halt -p", Deny, Forbidden, 9},
		{"sudo reboot", "sudo reboot", Deny, Forbidden, 9},
		{"init 0", "init 0", Deny, Forbidden, 9},
		{"init 6", "sudo init 6", Deny, Forbidden, 9},
		{"telinit 1", "telinit 1", Deny, Forbidden, 9},
		{"systemctl poweroff", "systemctl poweroff", Deny, Forbidden, 9},
		{"systemctl reboot", "systemctl reboot", Deny, Forbidden, 9},
		{"systemctl halt", "systemctl halt", Deny, Forbidden, 9},
		{"systemctl kexec", "systemctl kexec", Deny, Forbidden, 9},
		{"systemctl suspend", "systemctl suspend", Deny, Forbidden, 9},
		{"systemctl hibernate", "systemctl -i hibernate", Deny, Forbidden, 9},
		{"systemctl isolate rescue", "systemctl isolate rescue.target", Deny, Forbidden, 9},
		{"reboot --help", "reboot --help", Allow, ReadOnly, 0},
	})
}

func TestKnownProcesses(t *testing.T) {
	checkKnown(t, []kcase{
		{"kill a pid", "kill 1234", Ask, Caution, 3},
		{"kill -9 a pid", "kill -9 1234", Ask, Caution, 3},
		{"kill -1 is a signal", "kill -1 1234", Ask, Caution, 3},
		{"kill -9 -1", "kill -9 -1", Deny, Forbidden, 9},
		{"kill -KILL -1", "kill -KILL -1", Deny, Forbidden, 9},
		{"kill -s KILL -1", "kill -s KILL -1", Deny, Forbidden, 9},
		{"kill -- -1", "kill -- -1", Deny, Forbidden, 9},
		{"kill -SIGTERM -1", "kill -SIGTERM -1", Deny, Forbidden, 9},
		{"kill 0", "kill 0", Ask, Dangerous, 6},
		{"kill init", "kill -9 1", Ask, Dangerous, 7},
		{"kill a process group", "kill -TERM -4321", Ask, Caution, 4},
		{"kill a job", "kill %1", Allow, SafeWrite, 2},
		{"kill a computed pid", "kill $(pgrep node)", Ask, Caution, 3},
		{"kill -l", "kill -l", Allow, ReadOnly, 0},
		{"killall", "killall node", Ask, Dangerous, 6},
		{"pkill", "pkill -f 'node server'", Ask, Caution, 5},
		{"killall5", "killall5 -9", Deny, Forbidden, 9},
	})
}

func TestKnownPrivilegeAndSchedules(t *testing.T) {
	checkKnown(t, []kcase{
		{"passwd", "passwd", Ask, Dangerous, 7},
		{"passwd -S", "passwd -S", Allow, ReadOnly, 0},
		{"usermod", "usermod -aG docker me", Ask, Dangerous, 7},
		{"useradd", "useradd bob", Ask, Dangerous, 7},
		{"visudo", "visudo", Ask, Dangerous, 7},
		{"visudo -c", "visudo -c", Allow, ReadOnly, 0},
		{"setcap", "setcap cap_net_raw+ep ./x", Ask, Dangerous, 7},
		{"crontab -r", "crontab -r", Ask, Dangerous, 7},
		{"crontab -l", "crontab -l", Allow, ReadOnly, 0},
		{"crontab FILE", "crontab jobs.txt", Ask, Caution, 5},
		{"crontab from a pipe", "echo '* * * * * x' | crontab -", Ask, Caution, 5},
		{"at runs its input", "echo 'rm -rf ~' | at now", Deny, Forbidden, 10},
		{"history -c", "history -c", Ask, Dangerous, 6},
		{"history -d", "history -d 12", Ask, Caution, 4},
	})
}

func TestKnownServicesAndMachine(t *testing.T) {
	checkKnown(t, []kcase{
		{"systemctl stop", "systemctl stop nginx", Ask, Caution, 5},
		{"systemctl disable", "systemctl disable --now nginx", Ask, Caution, 5},
		{"systemctl mask", "systemctl mask nginx", Ask, Caution, 5},
		{"systemctl start", "systemctl start nginx", Ask, Caution, 4},
		{"systemctl restart", "systemctl restart nginx", Ask, Caution, 4},
		{"systemctl status", "systemctl status nginx", Allow, ReadOnly, 0},
		{"systemctl --user status", "systemctl --user status x", Allow, ReadOnly, 0},
		{"service stop", "service nginx stop", Ask, Caution, 5},
		{"service status", "service nginx status", Allow, ReadOnly, 0},
		{"mount", "mount /dev/sdb1 /mnt", Ask, Dangerous, 7},
		{"mount lists", "mount", Allow, ReadOnly, 0},
		{"umount", "umount /mnt", Ask, Dangerous, 7},
		{"iptables -F", "iptables -F", Ask, Dangerous, 7},
		{"iptables --flush", "sudo iptables --flush INPUT", Ask, Dangerous, 7},
		{"iptables -L", "iptables -L -n", Allow, ReadOnly, 0},
		{"iptables adds a rule", "iptables -A INPUT -p tcp --dport 22 -j ACCEPT", Ask, Caution, 5},
		{"nft flush", "nft flush ruleset", Ask, Dangerous, 7},
		{"ufw disable", "ufw disable", Ask, Dangerous, 7},
		{"chattr", "chattr +i x", Ask, Caution, 5},
		{"sysctl -w", "sysctl -w net.ipv4.ip_forward=1", Ask, Caution, 5},
		{"sysctl reads", "sysctl net.ipv4.ip_forward", Allow, ReadOnly, 0},
		{"modprobe", "modprobe evil", Ask, Dangerous, 7},
		{"ip route add", "ip route add default via 10.0.0.1", Ask, Caution, 5},
		{"ip addr", "ip addr", Allow, ReadOnly, 0},
		{"journalctl --vacuum", "journalctl --vacuum-time=1s", Ask, Caution, 4},
		{"journalctl -f", "journalctl -f", Allow, Interactive, 1},
	})
}

func TestKnownPackages(t *testing.T) {
	checkKnown(t, []kcase{
		{"apt remove", "apt remove nginx", Ask, Caution, 4},
		{"apt-get purge", "apt-get purge -y nginx", Ask, Caution, 4},
		{"apt autoremove", "apt autoremove", Ask, Caution, 4},
		{"apt update", "apt update", Ask, Caution, 3},
		{"apt search", "apt search jq", Allow, ReadOnly, 0},
		{"dnf remove", "dnf remove nginx", Ask, Caution, 4},
		{"yum erase", "yum erase nginx", Ask, Caution, 4},
		{"dnf update installs", "dnf update", Ask, Caution, 5},
		{"pacman -R", "pacman -Rns nginx", Ask, Caution, 4},
		{"pacman -S", "pacman -S jq", Ask, Caution, 5},
		{"pacman -Ss", "pacman -Ss jq", Allow, ReadOnly, 0},
		{"pacman -Q", "pacman -Qi jq", Allow, ReadOnly, 0},
		{"brew uninstall", "brew uninstall jq", Ask, Caution, 4},
		{"brew remove", "brew remove jq", Ask, Caution, 4},
		{"brew list", "brew list", Allow, ReadOnly, 0},
		{"snap remove", "snap remove x", Ask, Caution, 4},
		{"dpkg -i", "dpkg -i x.deb", Ask, Caution, 5},
		{"dpkg -r", "dpkg -r x", Ask, Caution, 4},
		{"dpkg -l", "dpkg -l", Allow, ReadOnly, 0},
		{"pip uninstall", "pip uninstall -y requests", Ask, Caution, 4},
		{"sudo pip uninstall", "sudo pip uninstall -y requests", Ask, Dangerous, 7},
		{"npm uninstall -g", "npm uninstall -g typescript", Ask, Dangerous, 6},
		{"npm rm --global", "npm rm --global typescript", Ask, Dangerous, 6},
		{"npm uninstall", "npm uninstall left-pad", Ask, Caution, 3},
		{"yarn global remove", "yarn global remove x", Ask, Dangerous, 6},
		{"gem uninstall", "gem uninstall rails", Ask, Caution, 4},
		{"uv pip install", "uv pip install requests", Ask, Caution, 3},
		{"uv run a script", "uv run script.py", allowContained, anyCat, anyRisk},
		{"uvx runs a tool", "uvx ruff check .", Allow, SafeWrite, 2},
		{"poetry run", "poetry run pytest", allowContained, anyCat, anyRisk},
		{"conda env remove", "conda env remove -n x", Ask, Caution, 4},
		{"npx an unknown package", "npx cowsay hi", Ask, Caution, 3},
		{"npx -c", "npx -c 'rm -rf ~'", Deny, Forbidden, 10},
		{"npm exec", "npm exec -- eslint .", allowContained, anyCat, anyRisk},
		{"go env -w", "go env -w GOPROXY=direct", Ask, Caution, 3},
		{"go generate", "go generate ./...", Ask, Caution, 3},
		{"go build -o outside", "go build -o /usr/local/bin/x .", Ask, Dangerous, 7},
		{"cargo publish", "cargo publish", Ask, Caution, 5},
		{"cargo +nightly build", "cargo +nightly build", allowContained, anyCat, anyRisk},
	})
	// An install as root says so, besides the wrapper's own reason.
	for _, line := range []string{"sudo pip install requests", "sudo npm install -g x"} {
		d := New(nil).DecideLine(knownCtx, line)
		if !strings.Contains(strings.Join(d.Reasons, "; "), "system-wide as root") {
			t.Errorf("Decide(%q).Reasons = %q, want one saying it installs system-wide as root", line, d.Reasons)
		}
	}
}

func TestKnownContainersAndInfra(t *testing.T) {
	checkKnown(t, []kcase{
		{"docker system prune", "docker system prune -af", Ask, Dangerous, 7},
		{"docker rm -f", "docker rm -f web", Ask, Dangerous, 6},
		{"docker container rm -f", "docker container rm -f web", Ask, Dangerous, 6},
		{"docker rm", "docker rm web", Ask, Caution, 4},
		{"docker rmi -f", "docker rmi -f img", Ask, Dangerous, 6},
		{"docker image rm --force", "docker image rm --force img", Ask, Dangerous, 6},
		{"docker volume rm", "docker volume rm data", Ask, Dangerous, 7},
		{"docker volume prune", "docker volume prune -f", Ask, Dangerous, 7},
		{"docker run --privileged", "docker run --privileged ubuntu", Ask, Dangerous, 7},
		{"docker run -v /:/host", "docker run -v /:/host ubuntu", Ask, Dangerous, 7},
		{"docker run mounts the socket", "docker run -v /var/run/docker.sock:/s ubuntu", Ask, Dangerous, 7},
		{"docker run --mount of /etc", "docker run --mount type=bind,source=/etc,target=/e ubuntu", Ask, Dangerous, 7},
		{"docker run mounts the workspace", "docker run --rm -v $PWD:/src golang go test ./...", Ask, Caution, 4},
		{"docker run", "docker run --rm hello-world", Ask, Caution, 4},
		{"docker run -it", "docker run -it ubuntu bash", Ask, Caution, 4},
		{"docker run with -v after the image is the command's", "docker run ubuntu ls -v /:/x", Ask, Caution, 4},
		{"docker run --pid=host", "docker run --pid=host ubuntu", Ask, Caution, 5},
		{"docker compose down -v", "docker compose down -v", Ask, Dangerous, 7},
		{"docker-compose down", "docker-compose down", Ask, Caution, 4},
		{"docker build", "docker build -t x .", Allow, SafeWrite, 2},
		{"docker logs", "docker logs web", Allow, ReadOnly, 0},
		{"podman rm -f", "podman rm -f web", Ask, Dangerous, 6},
		{"kubectl delete", "kubectl delete ns prod", Ask, Dangerous, 7},
		{"kubectl -n x delete", "kubectl -n prod delete pod x", Ask, Dangerous, 7},
		{"kubectl apply", "kubectl apply -f x.yaml", Ask, Caution, 5},
		{"kubectl replace", "kubectl replace -f x.yaml", Ask, Caution, 5},
		{"kubectl get", "kubectl get pods -A", Allow, ReadOnly, 0},
		{"kubectl drain", "kubectl drain node1", Ask, Dangerous, 6},
		{"helm uninstall", "helm uninstall web", Ask, Dangerous, 7},
		{"helm delete", "helm delete web", Ask, Dangerous, 7},
		{"helm install", "helm install web ./chart", Ask, Caution, 5},
		{"terraform destroy", "terraform destroy", Ask, Dangerous, 7},
		{"terraform apply -auto-approve", "terraform apply -auto-approve", Ask, Dangerous, 7},
		{"terraform apply --auto-approve", "terraform apply --auto-approve", Ask, Dangerous, 7},
		{"terraform apply -destroy", "terraform apply -destroy", Ask, Dangerous, 7},
		{"terraform apply", "terraform apply", Ask, Caution, 5},
		{"terraform -chdir apply", "terraform -chdir=infra apply", Ask, Caution, 5},
		{"terraform plan", "terraform plan", Ask, Caution, 3},
		{"terraform fmt", "terraform fmt", Allow, SafeWrite, 2},
		{"tofu destroy", "tofu destroy", Ask, Dangerous, 7},
		{"pulumi destroy", "pulumi destroy --yes", Ask, Dangerous, 7},
	})
}
