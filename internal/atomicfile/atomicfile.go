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
func Write(path string, data []byte) (err error) {
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
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
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
