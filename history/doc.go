// Package history keeps the record of every command that went through
// forgebox in an embedded SQLite database (modernc.org/sqlite, pure Go): what
// was asked, what the judge decided, what ran where, and how it ended.
//
// Guarantees:
//   - A run is written when it starts and completed when it ends; a row left
//     "running" by a process that no longer exists (SIGKILL, power loss) is
//     marked "abandoned" by the next Open, never lost. Start commits with
//     synchronous=FULL so that the started row survives a power cut; other
//     writes use NORMAL (a power cut may undo a Finish, and the row then
//     reads as abandoned).
//   - Many processes may write at once: WAL, a 10 s busy timeout, retries of
//     the SQLITE_BUSY that SQLite returns without waiting while a connection
//     opens, write transactions that take the lock up front, and one short
//     statement per write (Start, Finish and Record are one statement each;
//     Prune deletes in batches). No transaction is held across a command.
//   - Command lines, arguments, output, environment values and the decision
//     and enforcement documents are redacted inside Start, Finish, Record and
//     Spool.Write
//     (well-known secret shapes and the values the caller names as secret),
//     and bounded (256 KiB per field, head and tail kept). The database file
//     is created 0600 in a 0700 directory; its -wal and -shm files, kept
//     between processes, copy that mode.
//   - A Spool takes runs without opening the database: JSON lines appended
//     to a journal (0600, in PATH.spool, 0700), a run's running row when it
//     starts and its completion when it ends, each in one write to a file
//     its writer holds open under a shared lock. Writes are not synced; a
//     caller syncs a long run's running row (Spool.Sync). Open ingests the
//     spool before anything else: it takes the journal, upserts every run
//     of it on the run's key (so concurrent ingesters leave one row per
//     run), and removes a taken journal only once no writer holds it, so
//     a reader never misses a spooled run. A line that does not decode is
//     skipped with a warning and its journal kept aside (.bad); it never
//     blocks Open.
//   - A file that is not a database, or fails its quick check when opening
//     fails, is moved aside (PATH.corrupt-YYYYMMDDTHHMMSS) and a new one
//     started; Open says so. A busy, unreadable or newer-schema database is
//     never moved.
//
// Not guaranteed: redaction finds known shapes, not every secret; a secret
// split across the head and tail of kept output, or encoded (base64, URL
// escaping of a caller-named value), may remain. Open does not run a full
// integrity check (Check does, for forgebox doctor). The package knows
// nothing of sandboxes or policies: callers pass what was enforced and
// decided as values.
package history
