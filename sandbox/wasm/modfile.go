package wasm

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/artifactforge/forge/internal/storepath"
)

// moduleExt names a built module in the cache: the instrumented module, gzip-compressed. A Go
// module compresses to about a third of its size, and reading one back costs a few milliseconds
// of the cold load (see RATIONALE.md, "Smaller wasm artifacts").
const moduleExt = ".wasm.gz"

// modulePath is where the module with content key key is cached.
func (b *builder) modulePath(key string) string {
	return filepath.Join(b.dir, key+moduleExt)
}

// readModule reads and decompresses the cached module at path. A damaged file (cut short, not
// gzip, over MaxModuleBytes) is an error, and the caller builds the module again.
func readModule(path string) ([]byte, error) {
	f, err := storepath.OpenFile(path, os.O_RDONLY, 0, "read a cached module")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("cached module %s: %w", path, err)
	}
	var buf bytes.Buffer
	if fi, err := f.Stat(); err == nil {
		buf.Grow(int(min(3*fi.Size()+4096, MaxModuleBytes)))
	}
	n, err := io.Copy(&buf, io.LimitReader(zr, MaxModuleBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cached module %s: %w", path, err)
	}
	if n > MaxModuleBytes {
		return nil, fmt.Errorf("cached module %s: over %d bytes", path, MaxModuleBytes)
	}
	return buf.Bytes(), nil
}

// moduleGzipLevel trades a little size for compile time: on a hello-world module, level 2 writes
// 0.62 MB in ~40% of the time level 6 (gzip's default) takes to write 0.57 MB (2.7x faster,
// +0.7% of the artifact's disk). Compressing at level 6 added ~5% to the cold compile of an
// artifact whose signature keeps the encoding/json dispatcher.
const moduleGzipLevel = 2

// cached returns the module cached at path if its SHA-256 is the one recorded when this package
// wrote it (records.go): a module swapped, planted or damaged in the cache is not used, and the
// caller builds the module again, which replaces the file.
func (b *builder) cached(path, key string) ([]byte, bool) {
	if storepath.Check(b.root, path, "read a cached module") != nil {
		return nil, false
	}
	bin, err := readModule(path)
	if err != nil {
		return nil, false
	}
	if want := b.rec.Read(moduleRecord(key)); want == "" || want != sha256Hex(bin) {
		b.rejected.Add(1)
		return nil, false
	}
	// Record the use for PruneCache; a read-only cache simply keeps its old time.
	_ = os.Chtimes(path, time.Time{}, time.Now())
	return bin, true
}

// writeModule compresses bin and writes it to path atomically (following no link below root).
func writeModule(root, path string, bin []byte) error {
	var buf bytes.Buffer
	buf.Grow(len(bin) / 2)
	zw, err := gzip.NewWriterLevel(&buf, moduleGzipLevel)
	if err != nil {
		return err
	}
	if _, err := zw.Write(bin); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return writeFileAtomic(root, path, buf.Bytes())
}
