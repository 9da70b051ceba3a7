package sandbox

// Modes of a private cache (CacheMount.Mode).
const (
	// CacheOverlay: the host's cache directory is the lower layer of an
	// overlay whose upper layer is forgebox's; reads find what the host
	// has, writes land in the private cache.
	CacheOverlay = "overlay"
	// CachePrivate: the private cache alone, mounted writable, with no
	// view of the host's (the host has none, or overlay was refused).
	CachePrivate = "private"
)

// CacheMount is one private cache of a run.
type CacheMount struct {
	// Name is the entry of caches.Table.
	Name string `json:"name"`
	// Path is where the command finds it.
	Path string `json:"path"`
	Mode string `json:"mode"`
	// Env is the variable that points the tool at Path, when the host has
	// no directory to mount over ("" otherwise).
	Env string `json:"env,omitempty"`
}
