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
	return openToAllMode(path, fi.Mode(), FileDir(path), dirPerm, op)
}

// openToAllMode is openToAll's verdict on the file at path of mode m in directory dir, whose
// permission perm gives.
func openToAllMode(path string, m fs.FileMode, dir string, perm func(dir string) (fs.FileMode, bool), op string) error {
	if m.Perm()&0o002 != 0 {
		return openToAllErr(path, "", m.Perm(), op)
	}
	if p, ok := perm(dir); ok && p&0o002 != 0 {
		return openToAllErr(dir, path, p, op)
	}
	return nil
}

// dirPerm is dir's permission, false if it cannot be read.
func dirPerm(dir string) (fs.FileMode, bool) {
	di, err := os.Stat(dir)
	if err != nil {
		return 0, false
	}
	return di.Mode().Perm(), true
}

// OpenToAllCheck is OpenRegular's refusal of a file every user may write, it or its directory
// (ErrOpenToAll), made without opening the file: for listings, which read an index instead of the
// files and would otherwise show as sound a file that opening refuses. It costs an Lstat a file
// and a Stat a directory (remembered: a listing's files share a few). Not for concurrent use.
type OpenToAllCheck struct {
	dirs map[string]fs.FileMode // permission by directory; absent: unread
	st   statBuf
	buf  []byte
}

// Check returns what OpenRegular(path, op) would refuse it with for its mode (ErrOpenToAll), or
// nil; a path that cannot be read is the open's to report.
func (c *OpenToAllCheck) Check(path, op string) error {
	return c.CheckIn(filepath.Dir(path), filepath.Base(path), op)
}

// CheckIn is Check of the file name in the directory dir (a clean path).
func (c *OpenToAllCheck) CheckIn(dir, name, op string) error {
	if !modesMatter {
		return nil
	}
	c.buf = append(append(append(c.buf[:0], dir...), filepath.Separator), name...)
	path := string(c.buf)
	perm, link, ok := lstatPerm(path, &c.st)
	if !ok {
		return nil
	}
	if link { // as the open: the file it ends at, in that file's directory
		fi, err := os.Stat(path)
		if err != nil {
			return nil
		}
		perm, dir = fi.Mode().Perm(), FileDir(path)
	}
	return openToAllMode(path, perm, dir, c.dirPerm, op)
}

func (c *OpenToAllCheck) dirPerm(dir string) (fs.FileMode, bool) {
	if p, ok := c.dirs[dir]; ok {
		return p, true
	}
	p, ok := dirPerm(dir)
	if ok {
		if c.dirs == nil {
			c.dirs = map[string]fs.FileMode{}
		}
		c.dirs[dir] = p
	}
	return p, ok
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
