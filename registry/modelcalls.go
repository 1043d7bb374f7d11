package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/artifactforge/forge/internal/storepath"
)

// ModelCallLedger is a store's own record of the model calls each client spent, shared by every
// forge that opens the store: with it, a client's bound on model calls (forge.ModelCallLimit)
// holds across a fleet of servers on one store instead of once per process. A backend offers it
// optionally (the fleet store and the directory store do); without it each forge counts in its
// own process.
type ModelCallLedger interface {
	// ModelCallsSpent returns when client's recorded model calls were spent, oldest first.
	ModelCallsSpent(client string) ([]time.Time, error)
	// SpendModelCall records one model call of client at now, keeping only its last keep (the
	// only ones a bound of keep calls ever reads).
	SpendModelCall(client string, now time.Time, keep int) error
}

// The directory store's ledger: a file per client under modelcalls/ (named by the client's
// SHA-256: a client is any string), its spends in unix nanoseconds, rewritten under the store's
// flock, so that the processes sharing a directory (a server and several `forge mcp`) share each
// client's bound as a fleet's servers do.
const modelCallsDir = "modelcalls"

func (s *Store) modelCallsPath(client string) string {
	h := sha256.Sum256([]byte(client))
	return filepath.Join(s.root, modelCallsDir, hex.EncodeToString(h[:16])+".json")
}

// maxModelCallsBytes bounds a client's ledger file (a bound of 10,000 calls is 200 KB).
const maxModelCallsBytes = 1 << 20

func (s *Store) readModelCalls(path string) ([]int64, error) {
	data, err := storepath.ReadRegular(path, "read model calls from")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ns []int64
	if len(data) > maxModelCallsBytes || json.Unmarshal(data, &ns) != nil {
		return nil, fmt.Errorf("registry: %s: %w (remove it: it only counts model calls)", path, ErrCorrupt)
	}
	return ns, nil
}

// ModelCallsSpent returns client's spends as the store recorded them, oldest first.
func (s *Store) ModelCallsSpent(client string) ([]time.Time, error) {
	ns, err := s.readModelCalls(s.modelCallsPath(client))
	if err != nil {
		return nil, err
	}
	out := make([]time.Time, len(ns))
	for i, n := range ns {
		out[i] = time.Unix(0, n)
	}
	return out, nil
}

// SpendModelCall records one spend of client at now, in time order, keeping the last keep. A
// damaged file starts over (it only ever lets the client spend more).
func (s *Store) SpendModelCall(client string, now time.Time, keep int) error {
	path := s.modelCallsPath(client)
	if err := s.mkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return s.withLock(path+".lock", func() error {
		ns, err := s.readModelCalls(path)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			return err
		}
		ns = append(ns, now.UnixNano())
		slices.Sort(ns)
		data, err := json.Marshal(ns[max(0, len(ns)-keep):])
		if err != nil {
			return err
		}
		return s.writeFile(path, data)
	})
}

var _ ModelCallLedger = (*Store)(nil)
