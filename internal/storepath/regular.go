package storepath

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// ErrNotRegular is what a refusal of a store file that is not a regular file matches.
var ErrNotRegular = errors.New("not a regular file")

// ErrOpenToAll is what a refusal of a store file that every user may change matches.
var ErrOpenToAll = errors.New("writable by every user")

// notRegular refuses f, opened at path, unless it is a regular file: a named pipe would block the
// open or the read until a writer or reader came, and a device might never end. forge creates
// only regular files in its store.
func notRegular(f *os.File, path, op string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return notRegularErr(path, typeName(fi.Mode()), op)
	}
	return nil
}

// openToAll refuses f, opened at path to read, when every user may write it or its directory:
// who can write or replace a store file decides what forge does (code, contracts, lessons,
// checksums, the events the console shows). forge never makes either (files 0644 or 0600,
// directories 0755 or 0700; the store's own directories are checked when it opens), while a
// group the operator chose may write both.
func openToAll(f *os.File, path, op string) error {
	if !modesMatter {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o002 != 0 {
		return openToAllErr(path, "", fi.Mode().Perm(), op)
	}
	dir := FileDir(path)
	if di, err := os.Stat(dir); err == nil && di.Mode().Perm()&0o002 != 0 {
		return openToAllErr(dir, path, di.Mode().Perm(), op)
	}
	return nil
}

// FileDir is the directory of the file path names: when path is a link (links followed up to
// the system's 40), the directory of the file it ends at, which whoever may write it can
// replace.
func FileDir(path string) string {
	for range 40 {
		target, err := os.Readlink(path)
		if err != nil {
			break // not a link
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return filepath.Dir(path)
}

// modesMatter: file modes say who may write (not on Windows).
var modesMatter = runtime.GOOS != "windows"

func openToAllErr(p, file string, mode fs.FileMode, op string) error {
	what := p
	if file != "" {
		what = "the directory " + p + " of " + file
	}
	return fmt.Errorf("%w: %s is writable by every user (mode %04o; forge opened it to %s): whoever writes it decides what forge does, and forge never makes it so; "+
		"run `chmod o-w %s`, check what it holds, and run the command again", ErrOpenToAll, what, mode, op, p)
}

func notRegularErr(path, kind, op string) error {
	return fmt.Errorf("%w: %s is a %s (forge opened it to %s): forge creates only regular files in its store; remove it, and run the command again", ErrNotRegular, path, kind, op)
}

func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}

// OpenRegular opens a store file for reading, without blocking on a named pipe, and refuses one
// that is not a regular file (ErrNotRegular) or that every user may write, it or its directory
// (ErrOpenToAll). Unlike OpenFile it follows a link at path: reads
// are not what the link checks guard.
func OpenRegular(path, op string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonBlock, 0)
	if err != nil {
		return nil, err
	}
	if err := notRegular(f, path, op); err != nil {
		f.Close()
		return nil, err
	}
	if err := openToAll(f, path, op); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadRegular is os.ReadFile of a store file through OpenRegular.
func ReadRegular(path, op string) ([]byte, error) {
	f, err := OpenRegular(path, op)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
