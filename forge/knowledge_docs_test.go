package forge

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/learner"
	"github.com/artifactforge/forge/registry"
)

// knowledgeDocs is an in-memory registry.Docs, as a fleet store's Knowledge() is.
type knowledgeDocs struct {
	mu   sync.Mutex
	docs map[string][]byte
	rev  int
	set  []string // quarantined
}

func (d *knowledgeDocs) Names() ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for n := range d.docs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func (d *knowledgeDocs) Read(name string) ([]byte, string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.docs[name]
	if !ok {
		return nil, "", nil
	}
	return append([]byte(nil), b...), strconv.Itoa(d.rev), nil
}

func (d *knowledgeDocs) Modify(name string, fn func([]byte) ([]byte, error)) error {
	d.mu.Lock()
	old, ok := d.docs[name]
	d.mu.Unlock()
	if !ok {
		old = nil
	}
	b, err := fn(old)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.docs[name] = append([]byte(nil), b...)
	d.rev++
	return nil
}

func (d *knowledgeDocs) Quarantine(name string, why error) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.docs, name)
	d.rev++
	d.set = append(d.set, name+": "+why.Error())
	return "bucket/quarantine/" + name
}

// docsBackend is a store whose knowledge is kept by the backend (a fleet store's shape).
type docsBackend struct {
	local string
	docs  registry.Docs
}

func (b docsBackend) LocalDir() string         { return b.local }
func (b docsBackend) Knowledge() registry.Docs { return b.docs }

// TestKnowledgeOnBackendDocs: when the store keeps knowledge documents, the learner reads and
// writes them (nothing under the local directory) and quarantines through them.
func TestKnowledgeOnBackendDocs(t *testing.T) {
	local := t.TempDir()
	docs := &knowledgeDocs{docs: map[string][]byte{"broken.yaml": []byte("{not: [a list")}}
	l, err := openKnowledge(docsBackend{local: local, docs: docs}, learner.Options{Revalidate: -1})
	require.NoError(t, err)
	_, _, err = l.Record(learner.Entry{Content: "use host.Now", Domain: learner.ForgeDomain})
	require.NoError(t, err)
	es, err := l.List("")
	require.NoError(t, err)
	require.Len(t, es, 1)
	require.Len(t, docs.set, 1, "the damaged document is quarantined through the Docs")
	assert.Contains(t, docs.set[0], "broken.yaml: knowledge file does not parse")
	assert.Contains(t, string(docs.docs["forge.yaml"]), "use host.Now")
	_, err = os.Stat(filepath.Join(local, learner.Dir))
	assert.True(t, os.IsNotExist(err), "a backend's knowledge writes nothing under the local directory")
	assert.Equal(t, "", l.Dir())
}

// TestKnowledgeOnDirectoryStore: a directory store (Knowledge nil) keeps knowledge under its
// LocalDir and quarantines a damaged domain file through the store (a registry.Maintainer).
func TestKnowledgeOnDirectoryStore(t *testing.T) {
	dir := t.TempDir()
	s, err := registry.OpenWith(dir, registry.OpenOptions{})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, learner.Dir), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, learner.Dir, "clock.yaml"), []byte("- reasoning: no content\n"), 0o644))
	l, err := OpenKnowledge(s, learner.Options{Revalidate: -1})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(s.LocalDir(), learner.Dir), l.Dir())
	es, err := l.List("")
	require.NoError(t, err)
	assert.Empty(t, es)
	q, err := s.Quarantined()
	require.NoError(t, err)
	require.Len(t, q, 1)
	assert.Contains(t, q[0].Path, filepath.Join(learner.Dir, "clock.yaml"))

	// Without a Maintainer the damaged file is set aside next to itself.
	require.NoError(t, os.WriteFile(filepath.Join(dir, learner.Dir, "clock.yaml"), []byte("- reasoning: no content\n"), 0o644))
	l, err = openKnowledge(docsBackend{local: dir}, learner.Options{Revalidate: -1})
	require.NoError(t, err)
	_, err = l.List("")
	require.NoError(t, err)
	m, err := filepath.Glob(filepath.Join(dir, learner.Dir, "clock.yaml.damaged.*"))
	require.NoError(t, err)
	assert.Len(t, m, 1)
}
