package policy

import (
	"fmt"
	"strings"
)

// dbKnowledge covers database clients: what they do is the statements
// they are given, judged one by one.
func dbKnowledge(name string) func(*judge, *Command) {
	switch name {
	case "psql":
		return judgePsql
	case "mysql", "mariadb":
		return judgeMysql
	case "sqlite3", "sqlite":
		return judgeSqlite
	case "mongo", "mongosh":
		return judgeMongo
	case "redis-cli", "valkey-cli", "keydb-cli":
		return judgeRedis
	}
	return nil
}

func judgePsql(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "cdfhpUvoLPTFR", long: " command dbname file host port username set variable output log-file pset table-attr field-separator record-separator "})
	if s.has("-l", "--list", "-V", "--version", "-?", "--help") {
		j.add(ReadOnly, 1, "psql lists databases or prints its version")
		return
	}
	if out, ok := s.val("-o", "--output", "-L", "--log-file"); ok {
		j.write(staticArg(out), "psql -o")
	}
	if s.has("-W", "--password") {
		j.add(Interactive, 1, "interactive: psql -W asks for the password")
	}
	queried := false
	for _, o := range s.opts {
		switch {
		case o.short == 'c' || o.long == "command":
			j.sql("psql", o.val, !o.dynamic, "psql", false)
			queried = true
		case (o.short == 'f' || o.long == "file") && o.val != "-":
			j.add(Caution, 3, "psql runs the SQL in %s", o.val)
			queried = true
		}
	}
	if !queried {
		j.dbInput(c, "psql", func(text string, static bool) { j.sql("psql", text, static, "psql", false) })
	}
}

func judgeMysql(j *judge, c *Command) {
	args := make([]Arg, 0, len(c.Args))
	prompt := false
	for _, a := range c.Rest() {
		switch v := a.Value; {
		case a.Static && v == "-p" || v == "--password":
			prompt = true
		case a.Static && strings.HasPrefix(v, "-p") && !strings.HasPrefix(v, "--"):
			// -pSECRET: the password, glued; not a cluster of flags.
		default:
			args = append(args, a)
		}
	}
	s := scan(args, flags{short: "eDhPuSOT", long: " execute database host port user socket init-command defaults-file defaults-extra-file tee pager "})
	if prompt {
		j.add(Interactive, 1, "interactive: %s -p without a value asks for the password", c.Name)
	}
	if p, ok := s.val("--pager"); ok {
		j.add(Caution, 5, "%s --pager runs %s", c.Name, p)
	}
	if t, ok := s.val("--tee"); ok {
		j.write(staticArg(t), c.Name+" --tee")
	}
	queried := false
	for _, o := range s.opts {
		if o.short == 'e' || o.long == "execute" || o.long == "init-command" {
			j.sql(c.Name, o.val, !o.dynamic, "mysql", false)
			queried = true
		}
	}
	if s.has("-V", "--version", "-?", "--help") {
		j.add(ReadOnly, 0, "%s prints its version", c.Name)
		return
	}
	if !queried {
		j.dbInput(c, c.Name, func(text string, static bool) { j.sql(c.Name, text, static, "mysql", false) })
	}
}

// sqliteValues are sqlite3's options that take a value.
const sqliteValues = " cmd init separator nullvalue newline A vfs mmap maxsize pagecache lookaside heap escape "

func judgeSqlite(j *judge, c *Command) {
	var ops []Arg
	var cmds []string
	args := c.Rest()
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if !a.Static || len(v) < 2 || v[0] != '-' {
			ops = append(ops, a)
			continue
		}
		name := strings.TrimLeft(v, "-")
		if !strings.Contains(sqliteValues, " "+name+" ") || i+1 >= len(args) {
			if name == "version" || name == "help" {
				j.add(ReadOnly, 0, "sqlite3 prints its version")
				return
			}
			continue
		}
		i++
		switch name {
		case "cmd":
			cmds = append(cmds, args[i].Value)
		case "init":
			j.add(Caution, 3, "sqlite3 runs the statements in %s first", args[i].Value)
		}
	}
	if len(ops) > 1 {
		cmds = append(cmds, joinArgs(ops[1:]))
	}
	inWorkspace := len(ops) > 0 && j.inWorkspace(ops[:1])
	for _, sql := range cmds {
		j.sql("sqlite3", sql, allStatic(ops), "sqlite", inWorkspace)
	}
	if len(ops) <= 1 {
		j.dbInput(c, "sqlite3", func(text string, static bool) { j.sql("sqlite3", text, static, "sqlite", inWorkspace) })
	}
}

// dbInput judges what a client reads on its standard input, or, when
// nothing feeds it, says that it waits for a person.
func (j *judge) dbInput(c *Command, tool string, judge func(text string, static bool)) {
	in := c.Stdin
	switch {
	case in.HasDoc:
		judge(in.Doc, in.DocStatic)
	case in.From != nil && (in.From.Name == "echo" || in.From.Name == "printf") && allStatic(in.From.Args):
		judge(joinArgs(in.From.Rest()), true)
	case in.From != nil && downloaders[in.From.Name]:
		j.add(Caution, 5, "%s runs statements downloaded by %s", tool, in.From.Name)
	case in.From != nil:
		j.add(Caution, 3, "%s runs the statements %s prints", tool, in.From.Name)
	case hasInputRedir(c):
		j.add(Caution, 3, "%s runs the statements in a file", tool)
	default:
		j.add(Interactive, 2, "interactive: %s without a query opens a prompt", tool)
	}
}

// mongoDrop and friends find the calls of the mongo shell that destroy
// data.
var (
	mongoDropAll  = lazyRE(`\.dropDatabase\s*\(|\.drop\s*\(|\.(?:deleteMany|remove)\s*\(\s*(?:\{\s*\})?\s*[,)]`)
	mongoUpdAll   = lazyRE(`\.updateMany\s*\(\s*\{\s*\}`)
	mongoDropAcct = lazyRE(`\.drop(?:User|AllUsersFromDatabase|Role|AllRolesFromDatabase)\s*\(`)
	mongoWrite    = lazyRE(`\.(?:insert\w*|update\w*|replace\w*|delete\w*|remove|createCollection|createIndex\w*|bulkWrite|findOneAnd\w+|renameCollection|runCommand|adminCommand)\s*\(`)
)

func judgeMongo(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "fup", long: " eval file host port username password authenticationDatabase authenticationMechanism apiVersion tlsCAFile "})
	if s.has("--version", "--help", "-h") {
		j.add(ReadOnly, 0, "%s prints its version", c.Name)
		return
	}
	judged := false
	for _, o := range s.opts {
		if o.long == "eval" {
			j.mongo(c.Name, o.val)
			judged = true
		}
	}
	for _, a := range s.ops {
		if strings.HasSuffix(a.Value, ".js") {
			j.add(Caution, 3, "%s runs the script %s", c.Name, a.Value)
			judged = true
		}
	}
	if f, ok := s.val("-f", "--file"); ok {
		j.add(Caution, 3, "%s runs the script %s", c.Name, f)
		judged = true
	}
	if !judged || s.has("--shell") {
		j.dbInput(c, c.Name, func(text string, _ bool) { j.mongo(c.Name, text) })
	}
}

func (j *judge) mongo(tool, code string) {
	switch {
	case strings.Contains(code, "shutdownServer") || strings.Contains(code, "shutdown:"):
		j.add(Dangerous, 7, "%s shuts the database server down", tool)
	case mongoDropAll.MatchString(code):
		j.add(Dangerous, 7, "%s drops a database or collection, or deletes every document", tool)
	case mongoUpdAll.MatchString(code):
		j.add(Dangerous, 6, "%s updates every document of a collection", tool)
	case mongoDropAcct.MatchString(code):
		j.add(Dangerous, 6, "%s removes accounts or roles", tool)
	case mongoWrite.MatchString(code):
		j.add(Caution, 3, "%s changes documents or runs a database command", tool)
	default:
		j.add(ReadOnly, 1, "%s runs a query", tool)
	}
	j.reachLast() // the database server
	if strings.Contains(code, "child_process") || strings.Contains(code, "require(") {
		inlineCode(j, "node", code, true)
	}
}

func judgeRedis(j *judge, c *Command) {
	s := scan(c.Rest(), flags{short: "hpanusrid", long: " user pass pattern count eval rdb functions-rdb cacert cacertdir cert key tls-ciphers sni quoted-pattern ", stop: true})
	switch {
	case s.has("--stat", "--latency", "--latency-history", "--latency-dist", "--monitor"):
		j.add(Interactive, 1, "interactive: %s reports until it is interrupted", c.Name)
		return
	case s.has("--pipe"):
		j.reach(Caution, 4, "%s --pipe sends the commands it reads", c.Name)
		return
	case s.has("--eval"):
		j.reach(Caution, 5, "%s --eval runs a Lua script on the server", c.Name)
		return
	}
	if f, ok := s.val("--rdb", "--functions-rdb"); ok {
		j.add(ReadOnly, 1, "%s --rdb dumps the database to a file", c.Name)
		j.write(staticArg(f), c.Name+" --rdb")
		return
	}
	if len(s.ops) == 0 {
		if s.has("--scan", "--bigkeys", "--memkeys", "--hotkeys", "--version", "-v") {
			j.add(ReadOnly, 1, "%s reports on the keys", c.Name)
			return
		}
		j.dbInput(c, c.Name, func(text string, _ bool) {
			worst := finding{cat: ReadOnly, risk: 1, reason: c.Name + " runs a command"}
			for line := range strings.Lines(text) {
				if f := redisCommand(c.Name, strings.Fields(line)); worst.worse(f) {
					worst = f
				}
			}
			j.record(worst)
			j.reachLast()
		})
		return
	}
	words := make([]string, 0, 2)
	for _, a := range s.ops[:min(2, len(s.ops))] {
		words = append(words, a.Value)
	}
	j.record(redisCommand(c.Name, words))
	j.reachLast()
}

// redisCommand judges one redis command by its name.
func redisCommand(tool string, words []string) finding {
	if len(words) == 0 {
		return finding{cat: ReadOnly, risk: 0, reason: tool + " runs nothing"}
	}
	cmd, sub := strings.ToUpper(words[0]), ""
	if len(words) > 1 {
		sub = strings.ToUpper(words[1])
	}
	switch cmd {
	case "FLUSHALL", "FLUSHDB":
		return finding{cat: Dangerous, risk: 7, reason: fmt.Sprintf("%s %s deletes every key", tool, cmd)}
	case "SHUTDOWN", "DEBUG":
		return finding{cat: Dangerous, risk: 7, reason: fmt.Sprintf("%s %s stops or crashes the server", tool, cmd)}
	case "SLAVEOF", "REPLICAOF", "SWAPDB":
		return finding{cat: Dangerous, risk: 6, reason: fmt.Sprintf("%s %s can replace the server's data", tool, cmd)}
	case "CONFIG", "SCRIPT", "FUNCTION", "ACL", "MODULE":
		if sub == "GET" || sub == "LIST" || sub == "EXISTS" || sub == "WHOAMI" || sub == "DUMP" || sub == "STATS" || sub == "USERS" || sub == "CAT" {
			return finding{cat: ReadOnly, risk: 1, reason: fmt.Sprintf("%s %s %s only reads", tool, cmd, sub)}
		}
		return finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s %s %s changes the server (CONFIG SET can write files anywhere)", tool, cmd, sub)}
	case "EVAL", "EVALSHA", "EVAL_RO", "FCALL":
		return finding{cat: Caution, risk: 5, reason: fmt.Sprintf("%s %s runs a script on the server", tool, cmd)}
	case "MONITOR", "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE":
		return finding{cat: Interactive, risk: 1, reason: fmt.Sprintf("interactive: %s %s runs until it is interrupted", tool, cmd)}
	case "GET", "MGET", "KEYS", "SCAN", "INFO", "PING", "TTL", "PTTL", "EXISTS", "TYPE", "HGET", "HGETALL", "HKEYS", "HVALS",
		"HLEN", "HMGET", "HEXISTS", "LRANGE", "LLEN", "LINDEX", "SMEMBERS", "SCARD", "SISMEMBER", "ZRANGE", "ZCARD", "ZSCORE",
		"ZRANK", "DBSIZE", "STRLEN", "GETRANGE", "XRANGE", "XREVRANGE", "XLEN", "XINFO", "MEMORY", "SLOWLOG", "LASTSAVE", "TIME",
		"ECHO", "ROLE", "COMMAND", "OBJECT", "DUMP", "LATENCY", "HSCAN", "SSCAN", "ZSCAN", "RANDOMKEY", "CLIENT", "CLUSTER", "HELLO", "AUTH", "SELECT":
		if cmd == "CLIENT" && (sub == "KILL" || sub == "PAUSE") {
			return finding{cat: Caution, risk: 4, reason: fmt.Sprintf("%s CLIENT %s disrupts other clients", tool, sub)}
		}
		return finding{cat: ReadOnly, risk: 1, reason: fmt.Sprintf("%s %s only reads", tool, cmd)}
	}
	return finding{cat: Caution, risk: 3, reason: fmt.Sprintf("%s %s changes data", tool, cmd)}
}
