// Package storepath keeps forge's writes inside its store: nothing forge writes, locks, prunes or
// quarantines is reached through a symbolic link, since forge creates none. The store's root is
// the operator's choice and may itself be a link; every component below it is checked with Lstat,
// and files forge opens for writing are opened with O_NOFOLLOW where the system has it.
//
// The checks are made before each use, so a writer racing them could still swap a directory for
// a link in between; whoever can do that can write the store, and the store's writer is trusted
// (README, "Trust boundary of the store and its caches"). What they stop is a link planted in the
// store (by a restore, a copy, a careless operator) leading forge's writes, locks and deletions
// outside it.
package storepath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/artifactforge/forge/internal/atomicfile"
)

// ErrSymlink is what every refusal of this package matches (errors.Is).
var ErrSymlink = errors.New("symbolic link in the store")

// SymlinkError names the link forge refused to go through.
type SymlinkError struct {
	Path string // the link
	Op   string // what forge was about to do: "write", "lock", "prune", ...
}

func (e *SymlinkError) Error() string {
	op := e.Op
	if op == "" {
		op = "write"
	}
	return fmt.Sprintf("%s is a symbolic link: forge does not %s through a symbolic link in its store "+
		"(it creates none); replace it with the real directory or file (move what it points to in its place) or remove it", e.Path, op)
}

// Is makes errors.Is(err, ErrSymlink) true.
func (e *SymlinkError) Is(target error) bool { return target == ErrSymlink }

// Check returns a *SymlinkError for the first component of path below root that exists and is a
// symbolic link, path itself included. Components that do not exist yet end the check (forge
// creates them as real directories). A path outside root is checked whole from its first
// component below the filesystem root.
func Check(root, path string, op string) error {
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	base := filepath.Clean(root)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s is not inside the store %s: forge writes only inside its store", path, root)
	}
	if rel == "." {
		return nil
	}
	cur := base
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return &SymlinkError{Path: cur, Op: op}
		}
	}
	return nil
}

// MkdirAll makes dir (and its missing parents) below root, refusing a symbolic link on the way.
func MkdirAll(root, dir string, perm fs.FileMode) error {
	if err := Check(root, dir, "create directories"); err != nil {
		return err
	}
	return os.MkdirAll(dir, perm)
}

// Write is atomicfile.Write of path below root, refusing a symbolic link on the way (the file
// itself is replaced by rename, which never writes through a link at path).
func Write(root, path string, data []byte) error {
	if err := Check(root, filepath.Dir(path), "write"); err != nil {
		return err
	}
	return atomicfile.Write(path, data)
}

// Replace is atomicfile.Replace of path below root, refusing a symbolic link on the way.
func Replace(root, path string, data []byte) error {
	if err := Check(root, filepath.Dir(path), "write"); err != nil {
		return err
	}
	return atomicfile.Replace(path, data)
}

// OpenFile is os.OpenFile that never follows a symbolic link at path itself (O_NOFOLLOW); a link
// there is a *SymlinkError. Nor does it wait on a named pipe: what is not a regular file is
// refused (ErrNotRegular).
func OpenFile(path string, flag int, perm fs.FileMode, op string) (*os.File, error) {
	f, err := os.OpenFile(path, flag|oNoFollow|oNonBlock, perm)
	if err != nil && isLoop(err) {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &SymlinkError{Path: path, Op: op}
		}
	}
	if err != nil {
		if fi, serr := os.Lstat(path); serr == nil && fi.Mode()&fs.ModeNamedPipe != 0 {
			return nil, notRegularErr(path, "named pipe", op)
		}
		return nil, err
	}
	if err := notRegular(f, path, op); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// CheckedOpen is OpenFile after Check(root, path): no link anywhere below root.
func CheckedOpen(root, path string, flag int, perm fs.FileMode, op string) (*os.File, error) {
	if err := Check(root, filepath.Dir(path), op); err != nil {
		return nil, err
	}
	return OpenFile(path, flag, perm, op)
}
