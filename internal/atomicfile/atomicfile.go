// Package atomicfile writes files the way every forge store does (registry, learner): a reader
// sees either the old or the new content, never a mix, and the new content survives a crash once
// Write returns.
package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
)

// TempPrefix marks files being written; doctor removes leftovers of crashed writers, and watchers
// ignore them.
const TempPrefix = ".tmp-"

// Write makes data the content of path: temp file in the same directory, fsync, rename, fsync of
// the directory.
func Write(path string, data []byte) error { return write(path, data, true) }

// Replace makes data the content of path for readers at once (temp file, rename) without waiting
// for the disk: for files derived from others and rebuilt when lost or damaged (the store's
// summary index, the wasm module cache). A crash may leave the old content, none, or an empty
// or partial file, never a mix that parses as both.
func Replace(path string, data []byte) error { return write(path, data, false) }

func write(path string, data []byte, durable bool) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, TempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if durable {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if !durable {
		return nil
	}
	return SyncDir(dir)
}

// SyncDir flushes a directory's entries (a rename into it) to disk.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be flushed there; NTFS journals the rename itself
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
