package wasm

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/artifactforge/forge/internal/storepath"
)

// The wasm cache (CacheDir/wasm: built modules, compiled code) is not trusted: a module or a file
// of machine code is used only if its SHA-256 matches the record this package wrote when it made
// the file, kept under Options.RecordDir, outside the cache (the forge passes its store's sums/;
// the store's writer is trusted, the cache's is not). A file that does not match is ignored and
// made again (see README, "Trust boundary of the store and its caches").

// records are the checksums of what the cache holds, one small file per entry.
type records struct {
	root string // the directory symlink checks start from (the store, or RecordDir itself)
	dir  string // RecordDir/wasm
}

// maxRecordBytes bounds a record file (a line of two hex hashes).
const maxRecordBytes = 4096

// read returns the record at rel ("" if there is none or it is damaged).
func (r records) read(rel string) string {
	path := filepath.Join(r.dir, filepath.FromSlash(rel))
	if storepath.Check(r.root, path, "read a cache record") != nil {
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

// write records line at rel.
func (r records) write(rel, line string) error {
	path := filepath.Join(r.dir, filepath.FromSlash(rel))
	if err := storepath.MkdirAll(r.root, filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return storepath.Replace(r.root, path, []byte(line+"\n"))
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// moduleRecord is where the SHA-256 of the module with content key key is recorded.
func moduleRecord(key string) string { return "modules/" + key }

// recordRoot is the directory below which RecordDir's links are refused: its parent (the store,
// for the forge's sums/), so that a linked sums/ is refused too.
func recordRoot(dir string) string {
	if p := filepath.Dir(dir); p != dir {
		return p
	}
	return dir
}
