package sandbox

import (
	"path"
	"slices"
)

// Secret is one credential location forgebox hides: a path relative to
// every home directory (or an absolute one on the system), what kind of
// secret it holds, and the documentation that names that path, so that a
// reviewer can check the entry against the tool and a missing one is a
// one-line addition.
type Secret struct {
	Path string `json:"path"`
	// Dir says the tool keeps a directory there; the cover is the same
	// either way, tests plant a file inside.
	Dir  bool       `json:"dir"`
	Kind SecretKind `json:"kind"`
	// Source is the tool's documentation naming the path.
	Source string `json:"source"`
}

// SecretKind groups the secrets for people reading the list.
type SecretKind string

// Kinds of secrets.
const (
	KindKey      SecretKind = "key"              // private keys and certificates
	KindDatabase SecretKind = "database"         // database client passwords
	KindCloud    SecretKind = "cloud"            // cloud and hosting CLIs
	KindRegistry SecretKind = "registry"         // package and image registries
	KindForge    SecretKind = "forge"            // git hosting and git credentials
	KindPassword SecretKind = "password"         // password managers and keyrings
	KindBrowser  SecretKind = "browser"          // profiles with cookies and saved logins
	KindAgent    SecretKind = "agent"            // coding agents' and editors' tokens
	KindHistory  SecretKind = "history"          // shell and REPL histories
	KindSystem   SecretKind = "system"           // the system's own secrets
	KindOther    SecretKind = "other-credential" // other tools' tokens
)

// secretTable is every credential location forgebox hides on Linux, and
// the part of macOS's and Windows's lists those systems share (see
// darwinSecretLocations and windowsSecretLocations for their own). It is
// a literal, laid out by the linker: no start-up work. The sandbox view,
// the Landlock rules, macOS's profile, Windows's ACL grants, the MCP file
// tools and `forgebox doctor` all read it through SecretLocations and
// secretCandidates; integration/secrets_table_linux_test.go plants a file
// at every entry and reads it in a sandbox.
//
// Entries are the smallest path that holds only secrets: a dedicated
// directory when the tool keeps several (or rewrites one beside a backup),
// else the file. --ro PATH shows one again (grants replace covers).
var secretTable = []Secret{
	// Keys.
	{".ssh", true, KindKey, "https://man.openbsd.org/ssh.1#FILES"},
	{".gnupg", true, KindKey, "https://www.gnupg.org/documentation/manuals/gnupg/GPG-Configuration.html"},
	{".pki", true, KindKey, "https://chromium.googlesource.com/chromium/src/+/main/docs/linux/cert_management.md"},
	{".config/sops/age/keys.txt", false, KindKey, "https://github.com/getsops/sops#encrypting-using-age"},

	// Databases.
	{".pgpass", false, KindDatabase, "https://www.postgresql.org/docs/current/libpq-pgpass.html"},
	{".pg_service.conf", false, KindDatabase, "https://www.postgresql.org/docs/current/libpq-pgservice.html"},
	{".my.cnf", false, KindDatabase, "https://dev.mysql.com/doc/refman/8.4/en/option-files.html"},
	{".mylogin.cnf", false, KindDatabase, "https://dev.mysql.com/doc/refman/8.4/en/mysql-config-editor.html"},
	{".mongodb", true, KindDatabase, "https://www.mongodb.com/docs/mongodb-shell/reference/configure-shell-settings-global/"},
	{".cassandra", true, KindDatabase, "https://cassandra.apache.org/doc/latest/cassandra/managing/tools/cqlsh.html"},
	{".databrickscfg", false, KindDatabase, "https://docs.databricks.com/en/dev-tools/auth/config-profiles.html"},
	{".snowsql", true, KindDatabase, "https://docs.snowflake.com/en/user-guide/snowsql-config"},

	// Clouds and hosting.
	{".aws", true, KindCloud, "https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html"},
	{".azure", true, KindCloud, "https://learn.microsoft.com/en-us/cli/azure/azure-cli-configuration"},
	{".config/gcloud", true, KindCloud, "https://cloud.google.com/sdk/docs/configurations"},
	{".oci", true, KindCloud, "https://docs.oracle.com/en-us/iaas/Content/API/Concepts/sdkconfig.htm"},
	{".config/doctl", true, KindCloud, "https://docs.digitalocean.com/reference/doctl/reference/"},
	{".config/linode-cli", false, KindCloud, "https://techdocs.akamai.com/cloud-computing/docs/install-and-configure-the-cli"},
	{".linode-cli", false, KindCloud, "https://techdocs.akamai.com/cloud-computing/docs/install-and-configure-the-cli"},
	{".config/hcloud", true, KindCloud, "https://github.com/hetznercloud/cli/blob/main/docs/reference/manual/hcloud_context.md"},
	{".bluemix", true, KindCloud, "https://cloud.ibm.com/docs/cli?topic=cli-ibmcloud_env_var"},
	{".config/openstack", true, KindCloud, "https://docs.openstack.org/python-openstackclient/latest/configuration/index.html"},
	{".s3cfg", false, KindCloud, "https://s3tools.org/kb/item14.htm"},
	{".boto", false, KindCloud, "https://cloud.google.com/storage/docs/boto-gsutil"},
	{".config/rclone", true, KindCloud, "https://rclone.org/docs/#config-string"},
	{".terraform.d/credentials.tfrc.json", false, KindCloud, "https://developer.hashicorp.com/terraform/cli/config/config-file#credentials"},
	{".terraformrc", false, KindCloud, "https://developer.hashicorp.com/terraform/cli/config/config-file"},
	{".vault-token", false, KindCloud, "https://developer.hashicorp.com/vault/docs/commands/token-helper"},
	{".pulumi/credentials.json", false, KindCloud, "https://www.pulumi.com/docs/iac/cli/environment-variables/"},
	{".fly", true, KindCloud, "https://fly.io/docs/flyctl/config-save/"},
	{".local/share/com.vercel.cli", true, KindCloud, "https://vercel.com/docs/cli/global-options#global-config"},
	{".netlify", true, KindCloud, "https://cli.netlify.com/getting-started/#obtain-a-token-in-the-netlify-ui"},
	{".config/netlify", true, KindCloud, "https://cli.netlify.com/getting-started/#obtain-a-token-in-the-netlify-ui"},
	{".wrangler", true, KindCloud, "https://developers.cloudflare.com/workers/wrangler/commands/#login"},
	{".config/.wrangler", true, KindCloud, "https://developers.cloudflare.com/workers/wrangler/commands/#login"},
	{".netrc", false, KindCloud, "https://devcenter.heroku.com/articles/authentication#api-token-storage"},
	{".kube", true, KindCloud, "https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/"},
	{".config/helm", true, KindCloud, "https://helm.sh/docs/helm/helm/"},
	{".minikube", true, KindCloud, "https://minikube.sigs.k8s.io/docs/handbook/config/"},

	// Package and image registries.
	{".docker", true, KindRegistry, "https://docs.docker.com/reference/cli/docker/login/"},
	{".config/containers/auth.json", false, KindRegistry, "https://github.com/containers/image/blob/main/docs/containers-auth.json.5.md"},
	{".npmrc", false, KindRegistry, "https://docs.npmjs.com/cli/configuring-npm/npmrc"},
	{".yarnrc.yml", false, KindRegistry, "https://yarnpkg.com/configuration/yarnrc#npmAuthToken"},
	{".pypirc", false, KindRegistry, "https://packaging.python.org/en/latest/specifications/pypirc/"},
	{".gem/credentials", false, KindRegistry, "https://guides.rubygems.org/command-reference/#gem-signin"},
	{".cargo/credentials", false, KindRegistry, "https://doc.rust-lang.org/cargo/reference/config.html#credentials"},
	{".cargo/credentials.toml", false, KindRegistry, "https://doc.rust-lang.org/cargo/reference/config.html#credentials"},
	{".config/composer/auth.json", false, KindRegistry, "https://getcomposer.org/doc/articles/authentication-for-private-packages.md"},
	{".composer/auth.json", false, KindRegistry, "https://getcomposer.org/doc/articles/authentication-for-private-packages.md"},
	{".nuget/NuGet/NuGet.Config", false, KindRegistry, "https://learn.microsoft.com/en-us/nuget/consume-packages/configuring-nuget-behavior"},
	{".config/NuGet/NuGet.Config", false, KindRegistry, "https://learn.microsoft.com/en-us/nuget/consume-packages/configuring-nuget-behavior"},
	{".m2/settings.xml", false, KindRegistry, "https://maven.apache.org/settings.html#servers"},
	{".m2/settings-security.xml", false, KindRegistry, "https://maven.apache.org/guides/mini/guide-encryption.html"},
	{".gradle/gradle.properties", false, KindRegistry, "https://docs.gradle.org/current/userguide/build_environment.html"},
	{".ivy2/.credentials", false, KindRegistry, "https://www.scala-sbt.org/1.x/docs/Publishing.html"},

	// Git hosting and git's own credentials.
	{".git-credentials", false, KindForge, "https://git-scm.com/docs/git-credential-store#_files"},
	{".config/git/credentials", false, KindForge, "https://git-scm.com/docs/git-credential-store#_files"},
	{".config/gh", true, KindForge, "https://cli.github.com/manual/gh_help_environment"},
	{".config/hub", false, KindForge, "https://hub.github.com/hub.1.html"},
	{".config/glab-cli", true, KindForge, "https://gitlab.com/gitlab-org/cli/-/blob/main/docs/source/config/_index.md"},
	{".config/tea", true, KindForge, "https://gitea.com/gitea/tea#usage"},

	// Password managers and keyrings.
	{".password-store", true, KindPassword, "https://www.passwordstore.org/"},
	{".local/share/gopass", true, KindPassword, "https://github.com/gopasspw/gopass/blob/master/docs/config.md"},
	{".config/gopass", true, KindPassword, "https://github.com/gopasspw/gopass/blob/master/docs/config.md"},
	{".config/Bitwarden CLI", true, KindPassword, "https://bitwarden.com/help/cli/#config"},
	{".config/op", true, KindPassword, "https://developer.1password.com/docs/cli/config-directories/"},
	{".op", true, KindPassword, "https://developer.1password.com/docs/cli/config-directories/"},
	{".local/share/keyrings", true, KindPassword, "https://wiki.gnome.org/Projects/GnomeKeyring"},
	{".local/share/kwalletd", true, KindPassword, "https://userbase.kde.org/KDE_Wallet_Manager"},
	{".kde/share/apps/kwallet", true, KindPassword, "https://userbase.kde.org/KDE_Wallet_Manager"},

	// Browser profiles: cookies, saved passwords, session tokens.
	{".mozilla", true, KindBrowser, "https://support.mozilla.org/en-US/kb/profiles-where-firefox-stores-user-data"},
	{"snap/firefox/common/.mozilla", true, KindBrowser, "https://snapcraft.io/docs/data-locations"},
	{".var/app/org.mozilla.firefox", true, KindBrowser, "https://docs.flatpak.org/en/latest/conventions.html#xdg-base-directories"},
	{".config/google-chrome", true, KindBrowser, "https://chromium.googlesource.com/chromium/src/+/HEAD/docs/user_data_dir.md"},
	{".config/chromium", true, KindBrowser, "https://chromium.googlesource.com/chromium/src/+/HEAD/docs/user_data_dir.md"},
	{"snap/chromium/common/chromium", true, KindBrowser, "https://snapcraft.io/docs/data-locations"},
	{".config/BraveSoftware", true, KindBrowser, "https://github.com/brave/brave-browser/wiki/Troubleshooting#user-data-directory"},
	{".config/microsoft-edge", true, KindBrowser, "https://learn.microsoft.com/en-us/deployedge/microsoft-edge-browser-policies/userdatadir"},
	{".config/vivaldi", true, KindBrowser, "https://help.vivaldi.com/desktop/install-update/where-is-my-vivaldi-data-stored/"},

	// Coding agents and editors.
	{".claude/.credentials.json", false, KindAgent, "https://docs.anthropic.com/en/docs/claude-code/iam#credential-management"},
	{".codex/auth.json", false, KindAgent, "https://github.com/openai/codex/blob/main/docs/authentication.md"},
	{".gemini/oauth_creds.json", false, KindAgent, "https://github.com/google-gemini/gemini-cli/blob/main/docs/get-started/authentication.md"},
	{".gemini/.env", false, KindAgent, "https://github.com/google-gemini/gemini-cli/blob/main/docs/get-started/authentication.md"},
	{".config/github-copilot", true, KindAgent, "https://docs.github.com/en/copilot/how-tos/set-up/install-copilot-extension"},
	{".aider.conf.yml", false, KindAgent, "https://aider.chat/docs/config/aider_conf.html"},
	{".env", false, KindAgent, "https://aider.chat/docs/config/dotenv.html"},
	{".local/share/opencode/auth.json", false, KindAgent, "https://opencode.ai/docs/providers/#credentials"},
	{".config/Code/User/globalStorage", true, KindAgent, "https://code.visualstudio.com/docs/configure/settings#_settings-file-locations"},
	{".config/Cursor/User/globalStorage", true, KindAgent, "https://docs.cursor.com/account/account-settings"},

	// Other tools' tokens.
	{".config/configstore", true, KindOther, "https://github.com/yeoman/configstore#path"},
	{".config/ngrok", true, KindOther, "https://ngrok.com/docs/agent/config/#default-locations"},
	{".config/stripe", true, KindOther, "https://docs.stripe.com/cli/login"},

	// Shell and REPL histories: commands typed with passwords in them.
	{".bash_history", false, KindHistory, "https://www.gnu.org/software/bash/manual/html_node/Bash-History-Facilities.html"},
	{".zsh_history", false, KindHistory, "https://zsh.sourceforge.io/Doc/Release/Parameters.html#index-HISTFILE"},
	{".local/share/fish/fish_history", false, KindHistory, "https://fishshell.com/docs/current/cmds/history.html"},
	{".python_history", false, KindHistory, "https://docs.python.org/3/library/site.html#rlcompleter-config"},
	{".node_repl_history", false, KindHistory, "https://nodejs.org/api/repl.html#persistent-history"},
	{".psql_history", false, KindHistory, "https://www.postgresql.org/docs/current/app-psql.html#APP-PSQL-FILES"},
	{".mysql_history", false, KindHistory, "https://dev.mysql.com/doc/refman/8.4/en/mysql-logging.html"},
	{".sqlite_history", false, KindHistory, "https://sqlite.org/cli.html"},
	{".rediscli_history", false, KindHistory, "https://redis.io/docs/latest/develop/tools/cli/"},
	{".irb_history", false, KindHistory, "https://ruby.github.io/irb/#label-Command+History"},
	{".lesshst", false, KindHistory, "https://man7.org/linux/man-pages/man1/less.1.html"},

	// The system's own (absolute paths; hidden only where the caller can
	// read them).
	{"/etc/shadow", false, KindSystem, "https://man7.org/linux/man-pages/man5/shadow.5.html"},
	{"/etc/shadow-", false, KindSystem, "https://man7.org/linux/man-pages/man8/vipw.8.html"},
	{"/etc/gshadow", false, KindSystem, "https://man7.org/linux/man-pages/man5/gshadow.5.html"},
	{"/etc/gshadow-", false, KindSystem, "https://man7.org/linux/man-pages/man8/vipw.8.html"},
	{"/etc/security/opasswd", false, KindSystem, "https://man7.org/linux/man-pages/man8/pam_pwhistory.8.html"},
	{"/etc/ssl/private", true, KindSystem, "https://wiki.debian.org/Self-Signed_Certificate"},
	{"/etc/krb5.keytab", false, KindSystem, "https://web.mit.edu/kerberos/krb5-latest/doc/basic/keytab_def.html"},
	{"/etc/wireguard", true, KindSystem, "https://man7.org/linux/man-pages/man8/wg-quick.8.html"},
	{"/etc/NetworkManager/system-connections", true, KindSystem, "https://networkmanager.dev/docs/api/latest/NetworkManager.conf.html"},
	{"/etc/letsencrypt", true, KindSystem, "https://eff-certbot.readthedocs.io/en/stable/using.html#where-are-my-certificates"},
	{"/etc/sudoers", false, KindSystem, "https://man7.org/linux/man-pages/man5/sudoers.5.html"},
	{"/etc/sudoers.d", true, KindSystem, "https://man7.org/linux/man-pages/man5/sudoers.5.html"},
}

// sshHostKeyPattern matches the host's private SSH keys
// (https://man.openbsd.org/sshd.8#FILES).
const sshHostKeyPattern = "/etc/ssh/ssh_host_*_key"

// SecretLocations returns the table of credential locations forgebox
// hides, for reports (forgebox doctor --json) and tests. The caller owns
// the copy.
func SecretLocations() []Secret { return slices.Clone(secretTable) }

// homeSecret reports whether the entry lies under the home directories.
func (s Secret) homeSecret() bool { return !path.IsAbs(s.Path) }

// secretCandidates lists the secret locations to look for, given the
// directories that apply: every home entry under every home (and moved XDG
// directory), then the system's.
func secretCandidates(b secretBases) []string {
	var out, system []string
	for _, s := range secretTable {
		if !s.homeSecret() {
			system = append(system, s.Path)
			continue
		}
		b.each(s.Path, func(base, rel string) { out = append(out, path.Join(base, rel)) })
	}
	return append(out, system...)
}
