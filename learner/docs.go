package learner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/artifactforge/forge/internal/atomicfile"

	"github.com/artifactforge/forge/internal/storepath"
)

// Docs is where a Store keeps its domain documents: a small set of named documents ("go.yaml")
// that several processes read and change. It has exactly the method set of registry.Docs, so a
// store backend's Knowledge() is one without this package importing the registry. DirDocs is the
// directory implementation; the fleet store keeps them in a key-value bucket.
//
// The Store calls Quarantine from inside the fn of a Modify of the same name (a damaged document
// is set aside by whoever holds the right to replace it, so two processes never both act on the
// same damage): an implementation must not hold, while fn runs, a lock that Quarantine takes. A
// compare-and-swap Modify then sees its write refused (the document changed) and calls fn again
// with old nil.
type Docs interface {
	// Names lists the documents.
	Names() ([]string, error)
	// Read returns a document and an opaque version that changes whenever the document does
	// (nil, "", nil when it does not exist).
	Read(name string) (data []byte, version string, err error)
	// Modify replaces a document with fn(old) such that no concurrent Modify is lost; old is nil
	// when the document does not exist. An error from fn aborts (nothing is written).
	Modify(name string, fn func(old []byte) ([]byte, error)) error
	// Quarantine sets a damaged document aside (it then reads as missing) and says where it went.
	Quarantine(name string, why error) string
}

// stamper is a Docs that can tell a document's version without reading it (DirDocs: one stat);
// the Store uses it to revalidate its cache cheaply.
type stamper interface {
	stamp(name string) (string, error)
}

// versionedModifier is a Docs whose Modify also returns the version it wrote, so that the Store
// caches the new document under it with no read back.
type versionedModifier interface {
	modifyVersion(name string, fn func(old []byte) ([]byte, error)) (string, error)
}

// dirDocs is a directory of documents: a cross-process flock on <name without .yaml>.lock around
// every Modify, atomic replacement (temp file, fsync, rename, directory fsync), readers without a
// lock. A version is a stamp of the file's inode, modification time and size: an atomic
// replacement always makes a new inode.
type dirDocs struct {
	dir        string
	quarantine func(path string, why error) string
	readLimit  int64 // a file larger than this is not read (an *OversizeError); 0: no limit
	notify     func(*OversizeError, string)
}

// DirDocs is the directory dir as Docs (created on the first write). quarantine moves a damaged
// file out of the way and says where it went; nil renames it next to itself as
// <file>.damaged.<UTC time>.
func DirDocs(dir string, quarantine func(path string, why error) (movedTo string)) Docs {
	return &dirDocs{dir: dir, quarantine: quarantine}
}

// path checks a document name (a plain file name) and returns its file.
func (d *dirDocs) path(name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".lock") {
		return "", fmt.Errorf("learner: %q is not a knowledge document name (a plain file name such as go.yaml)", name)
	}
	return filepath.Join(d.dir, name), nil
}

// Names lists the directory's .yaml files (not the hidden ones), sorted; none when the directory
// does not exist.
func (d *dirDocs) Names() ([]string, error) {
	des, err := os.ReadDir(d.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("learner: list %s: %w (check the directory's permissions)", d.dir, err)
	}
	var out []string
	for _, de := range des {
		n := de.Name()
		if !de.IsDir() && strings.HasSuffix(n, ".yaml") && !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Read reads a file and stamps the very inode it read (an open file survives its replacement).
func (d *dirDocs) Read(name string) ([]byte, string, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, "", err
	}
	return readStamped(p, d.readLimit)
}

// readStamped reads a file (nil, "", nil when it does not exist); a file larger than limit (when
// limit > 0) is not read: the error is an *OversizeError.
func readStamped(path string, limit int64) ([]byte, string, error) {
	f, err := storepath.OpenRegular(path, "read knowledge from")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("learner: read %s: %w (check its permissions)", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("learner: read %s: %w", path, err)
	}
	if limit > 0 && fi.Size() > limit {
		return nil, stampOf(fi), &OversizeError{Document: filepath.Base(path), Size: fi.Size(), Limit: limit}
	}
	b := make([]byte, 0, fi.Size()+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", fmt.Errorf("learner: read %s: %w", path, err)
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
	return b, stampOf(fi), nil
}

// stamp is the version of a file without reading it ("" when it does not exist).
func (d *dirDocs) stamp(name string) (string, error) {
	p, err := d.path(name)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("learner: %w (check the directory's permissions)", err)
	}
	return stampOf(fi), nil
}

// stampOf is a file's version: inode, modification time and size.
func stampOf(fi os.FileInfo) string {
	return strconv.FormatUint(inode(fi), 36) + "-" + strconv.FormatInt(fi.ModTime().UnixNano(), 36) + "-" + strconv.FormatInt(fi.Size(), 36)
}

// Modify is a read-modify-write of one file under its flock.
func (d *dirDocs) Modify(name string, fn func(old []byte) ([]byte, error)) error {
	_, err := d.modifyVersion(name, fn)
	return err
}

func (d *dirDocs) modifyVersion(name string, fn func(old []byte) ([]byte, error)) (string, error) {
	path, err := d.path(name)
	if err != nil {
		return "", err
	}
	// No link below the store (knowledge/ itself, the file, its lock) is written or locked through.
	lockPath := strings.TrimSuffix(path, ".yaml") + ".lock"
	for _, p := range []string{path, lockPath} {
		if err := storepath.Check(filepath.Dir(d.dir), p, "write lessons"); err != nil {
			return "", fmt.Errorf("learner: %w", err)
		}
	}
	l := flock.New(lockPath)
	if err := l.Lock(); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("learner: lock %s: %w (check the store's permissions and free space)", l.Path(), err)
		}
		if err := os.MkdirAll(d.dir, 0o755); err != nil {
			return "", fmt.Errorf("learner: create %s: %w (check the path and its permissions)", d.dir, err)
		}
		if err := l.Lock(); err != nil {
			return "", fmt.Errorf("learner: lock %s: %w (check the store's permissions and free space)", l.Path(), err)
		}
	}
	defer l.Close()
	old, _, err := readStamped(path, d.readLimit)
	var oe *OversizeError
	if errors.As(err, &oe) {
		// Set aside unread (the Store's quarantine keeps the message); the domain starts again.
		to := d.Quarantine(name, oe)
		if d.notify != nil {
			d.notify(oe, to)
		}
		old, err = nil, nil
	}
	if err != nil {
		return "", err
	}
	data, err := fn(old)
	if err != nil {
		return "", err
	}
	if err := atomicfile.Write(path, data); err != nil {
		return "", fmt.Errorf("learner: write %s: %w (check free space and permissions; the file is unchanged)", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", nil // written; the next read stamps it
	}
	return stampOf(fi), nil
}

// Quarantine moves a damaged file away (through the quarantine function given to DirDocs). It
// takes no lock: the Store calls it from inside Modify's fn, under the file's lock.
func (d *dirDocs) Quarantine(name string, why error) string {
	path, err := d.path(name)
	if err != nil {
		return ""
	}
	if d.quarantine != nil {
		return d.quarantine(path, why)
	}
	dst := path + ".damaged." + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(path, dst); err != nil {
		return ""
	}
	return dst
}

// CopyDocs copies every document of src into dst, byte for byte, replacing a document of the same
// name in dst (each by one Modify, so a concurrent writer of dst loses nothing but sees the copy
// win). It returns how many it copied; a document deleted from src while copying is skipped.
// `forge store migrate` moves a store's knowledge with it.
func CopyDocs(dst, src Docs) (n int, err error) {
	names, err := src.Names()
	if err != nil {
		return 0, fmt.Errorf("learner: copy knowledge: list the source's documents: %w", err)
	}
	for _, name := range names {
		data, _, err := src.Read(name)
		if err != nil {
			return n, fmt.Errorf("learner: copy knowledge document %s: %w (%d of %d copied; run the copy again, it replaces what it copied)", name, err, n, len(names))
		}
		if data == nil {
			continue
		}
		if err := dst.Modify(name, func([]byte) ([]byte, error) { return data, nil }); err != nil {
			return n, fmt.Errorf("learner: copy knowledge document %s: %w (%d of %d copied; run the copy again, it replaces what it copied)", name, err, n, len(names))
		}
		n++
	}
	return n, nil
}
