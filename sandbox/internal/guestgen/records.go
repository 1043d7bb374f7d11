package guestgen

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/artifactforge/forge/internal/storepath"
)

// A backend's cache (CacheDir/wasm: built modules, compiled code; CacheDir/native: executables) is not trusted: a module or a file
// of machine code is used only if its SHA-256 matches the record this package wrote when it made
// the file, kept under Options.RecordDir, outside the cache (the forge passes its store's sums/;
// the store's writer is trusted, the cache's is not). A file that does not match is ignored and
// made again (see README, "Trust boundary of the store and its caches").

// Records are the checksums of what the cache holds, one small file per entry.
type Records struct {
	Root string // the directory symlink checks start from (the store, or RecordDir itself)
	Dir  string // RecordDir/<backend>
}

// maxRecordBytes bounds a record file (a line of two hex hashes).
const maxRecordBytes = 4096

// Read returns the record at rel ("" if there is none or it is damaged).
func (r Records) Read(rel string) string {
	path := filepath.Join(r.Dir, filepath.FromSlash(rel))
	if storepath.Check(r.Root, path, "read a cache record") != nil {
		return ""
	}
	f, err := storepath.OpenFile(path, os.O_RDONLY, 0, "read a cache record")
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRecordBytes))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Write records line at rel.
func (r Records) Write(rel, line string) error {
	path := filepath.Join(r.Dir, filepath.FromSlash(rel))
	if err := storepath.MkdirAll(r.Root, filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return storepath.Replace(r.Root, path, []byte(line+"\n"))
}

func SHA256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// RecordRoot is the directory below which RecordDir's links are refused: its parent (the store,
// for the forge's sums/), so that a linked sums/ is refused too.
func RecordRoot(dir string) string {
	if p := filepath.Dir(dir); p != dir {
		return p
	}
	return dir
}
