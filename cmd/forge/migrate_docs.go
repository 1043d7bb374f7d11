package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/artifactforge/forge/internal/atomicfile"
	"github.com/artifactforge/forge/learner"
	"github.com/artifactforge/forge/registry"
)

// knowledgeOf is where b keeps its knowledge documents: b.Knowledge(), or, when that is nil (a
// directory store), the files of LocalDir()/knowledge with the learner's locks.
func knowledgeOf(b registry.Backend) registry.Docs {
	if d := b.Knowledge(); d != nil {
		return d
	}
	var q func(string, error) string
	if m, ok := b.(registry.Maintainer); ok {
		q = func(path string, why error) string { return m.QuarantineFile(path, why).MovedTo }
	}
	return &knowledgeDir{dir: filepath.Join(b.LocalDir(), learner.Dir), quarantine: q}
}

// knowledgeDir is the learner's knowledge directory as registry.Docs: one <domain>.yaml per
// domain, changed under the learner's lock file <domain>.lock by atomic replacement.
type knowledgeDir struct {
	dir        string
	quarantine func(path string, why error) string
}

func (d *knowledgeDir) path(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".yaml") {
		return "", fmt.Errorf("%q is not a knowledge document name (a plain file name such as go.yaml)", name)
	}
	return filepath.Join(d.dir, name), nil
}

func (d *knowledgeDir) Names() ([]string, error) {
	ents, err := os.ReadDir(d.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", d.dir, err)
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".yaml") && !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (d *knowledgeDir) Read(name string) ([]byte, string, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", p, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return data, "", nil
	}
	return data, fmt.Sprintf("%d-%d", fi.ModTime().UnixNano(), fi.Size()), nil
}

func (d *knowledgeDir) Modify(name string, fn func(old []byte) ([]byte, error)) error {
	p, err := d.path(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w (check the path and its permissions)", d.dir, err)
	}
	l := flock.New(strings.TrimSuffix(p, ".yaml") + ".lock")
	if err := l.Lock(); err != nil {
		return fmt.Errorf("lock %s: %w (check the store's permissions and free space)", l.Path(), err)
	}
	defer l.Close()
	old, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		old, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	data, err := fn(old)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(p, data); err != nil {
		return fmt.Errorf("write %s: %w (check free space and permissions; the file is unchanged)", p, err)
	}
	return nil
}

func (d *knowledgeDir) Quarantine(name string, why error) string {
	p, err := d.path(name)
	if err != nil {
		return ""
	}
	if d.quarantine != nil {
		return d.quarantine(p, why)
	}
	dst := p + ".damaged." + time.Now().UTC().Format("20060102T150405.000000000Z")
	if os.Rename(p, dst) != nil {
		return ""
	}
	return dst
}
