package storepath

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is what a refusal of a store file that is not a regular file matches.
var ErrNotRegular = errors.New("not a regular file")

// notRegular refuses f, opened at path, unless it is a regular file: a named pipe would block the
// open or the read until a writer or reader came, and a device might never end. forge creates
// only regular files in its store.
func notRegular(f *os.File, path, op string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Mode().IsRegular() {
		return nil
	}
	return notRegularErr(path, typeName(fi.Mode()), op)
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
// that is not a regular file (ErrNotRegular). Unlike OpenFile it follows a link at path: reads
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
