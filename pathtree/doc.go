// Package pathtree answers one question about two path names: does the
// first name the second or something beneath it? It is the single place
// forgebox writes that test, so "/a" never contains "/ab", "/" contains
// every absolute path, and ".." never climbs back in.
//
// What it guarantees: the answer is lexical and exact for the names it is
// given, after filepath.Clean. Both names are cleaned first, so "/a/",
// "/a/." and "/x/../a" all name "/a"; a trailing slash does not change the
// answer. An absolute name is never within a relative one, nor the other way
// round. The empty string names nothing: it is within nothing and contains
// nothing (filepath.Clean would turn it into ".", which would silently
// contain every relative path).
//
// What it does not: it never touches the file system. A symbolic link (or a
// bind mount, or a Windows junction) can make a name that is lexically
// beneath a directory lead outside it, and the reverse; callers that judge
// real files resolve them first (filepath.EvalSymlinks, or an open beneath
// a directory fd) and pass the resolved names. Names compare byte for byte
// after cleaning: Windows and macOS file systems that ignore case are not
// modelled here, so callers that need that fold case first (sandbox's
// Windows paths keep their own comparison for that reason). Cleaning a name
// that held ".." after a symbolic link may name a different file than the
// kernel would open; that, too, is the caller's to avoid by resolving.
package pathtree
