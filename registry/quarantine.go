package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/artifactforge/forge/internal/storepath"
)

// A damaged file is moved to quarantine/<relative path with / as __>.<UTC timestamp>, next to a
// record of why, <id>.why.json. Entries stay pending — Doctor reports them and fails — until an
// operator restores them (Restore) or dismisses them (Dismiss); either moves the entry and its
// record to quarantine/resolved/. Nothing is ever deleted.

const (
	quarantineDir = "quarantine"
	resolvedDir   = "resolved"
	whySuffix     = ".why.json"
	stampLayout   = "20060102T150405.000000000Z"
)

// QuarantineReport says which damaged file was moved where, why, and what was put in its place.
// Kinds of a quarantined file (QuarantineEntry.Kind, QuarantineReport.Kind).
const (
	QuarantineRole     = "role"
	QuarantineArtifact = "artifact"
	QuarantineRegistry = "registry"
	QuarantineFile     = "file"
)

type QuarantineReport struct {
	ID       string    `json:"id,omitempty"` // the entry's name in quarantine/
	Path     string    `json:"path"`
	MovedTo  string    `json:"moved_to"`
	Reason   string    `json:"reason"`
	Restored string    `json:"restored,omitempty"` // what replaced it automatically, if anything
	Kind     string    `json:"kind,omitempty"`     // role | artifact | registry | file
	Role     string    `json:"role,omitempty"`
	Method   string    `json:"method,omitempty"`
	At       time.Time `json:"at,omitempty"`
}

// QuarantinedError is returned by Load for a damaged artifact it has just moved to quarantine.
type QuarantinedError struct {
	Report QuarantineReport
	Err    error // wraps ErrCorrupt
}

func (e *QuarantinedError) Error() string {
	return fmt.Sprintf("%v; moved to %s (see `forge quarantine ls`)", e.Err, e.Report.MovedTo)
}

func (e *QuarantinedError) Unwrap() error { return e.Err }

// classify names what a store-relative path holds.
func classify(rel string) (kind, role, method string) {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	switch {
	case len(parts) == 3 && parts[0] == "tools" && strings.HasSuffix(parts[2], ".json"):
		return QuarantineArtifact, parts[1], strings.TrimSuffix(parts[2], ".json")
	case len(parts) == 2 && parts[0] == rolesDir && strings.HasSuffix(parts[1], ".json"):
		return QuarantineRole, strings.TrimSuffix(parts[1], ".json"), ""
	case len(parts) == 1 && parts[0] == legacyRegistry:
		return QuarantineRegistry, "", ""
	}
	return QuarantineFile, "", ""
}

// quarantine moves a damaged file to quarantine/, runs fix (which may put a replacement in its
// place and amend the report) while the move is fresh, records why, and tells OnQuarantine.
func (s *Store) quarantine(path string, why error, restored string, fix func(*QuarantineReport)) QuarantineReport {
	rel, err := filepath.Rel(s.root, path)
	if err != nil {
		rel = filepath.Base(path)
	}
	kind, role, method := classify(rel)
	now := time.Now().UTC()
	rep := QuarantineReport{Path: path, Reason: why.Error(), Restored: restored, Kind: kind, Role: role, Method: method, At: now}
	dst, err := s.quarantineFile(rel, path, now)
	rep.MovedTo, rep.ID = dst, filepath.Base(dst)
	if err != nil {
		rep.Reason += fmt.Sprintf(" (moving it failed: %v)", err)
		rep.Restored = ""
	} else if fix != nil {
		fix(&rep)
	}
	if dst != "" && err == nil {
		if b, err := json.MarshalIndent(rep, "", "  "); err == nil {
			_ = s.writeFile(dst+whySuffix, append(b, '\n'))
		}
	}
	if s.OnQuarantine != nil {
		s.OnQuarantine(rep)
	}
	return rep
}

// quarantineFile moves path into quarantine/ as <relative name>.<UTC timestamp> and returns where
// it went. Nothing is deleted: an operator can inspect or restore it.
func (s *Store) quarantineFile(rel, path string, now time.Time) (string, error) {
	name := strings.ReplaceAll(filepath.ToSlash(rel), "/", "__")
	dst := filepath.Join(s.root, quarantineDir, name+"."+now.Format(stampLayout))
	if err := s.mkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	// The damaged file itself may be a link (it is moved as one); the directories on the way may not.
	if err := storepath.Check(s.root, filepath.Dir(path), "quarantine"); err != nil {
		return "", err
	}
	if err := os.Rename(path, dst); err != nil {
		return "", err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return dst, err
	}
	return dst, syncDir(filepath.Dir(dst))
}

// Quarantined lists the pending quarantine entries, oldest first, with the recorded reason (an
// entry quarantined by an older forge has none recorded).
func (s *Store) Quarantined() ([]QuarantineReport, error) {
	dir := filepath.Join(s.root, quarantineDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []QuarantineReport{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("registry: list %s: %w", dir, err)
	}
	out := []QuarantineReport{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || strings.HasSuffix(n, whySuffix) || strings.HasPrefix(n, tempPrefix) {
			continue
		}
		out = append(out, s.quarantineEntry(n))
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// quarantineEntry reads the record of entry id, or reconstructs what its name says.
func (s *Store) quarantineEntry(id string) QuarantineReport {
	p := filepath.Join(s.root, quarantineDir, id)
	var rep QuarantineReport
	if b, err := storepath.ReadRegular(p+whySuffix, "read"); err == nil && json.Unmarshal(b, &rep) == nil {
		rep.ID, rep.MovedTo = id, p
		return rep
	}
	rep = QuarantineReport{ID: id, MovedTo: p, Reason: "not recorded (quarantined by an older forge)"}
	rel := id
	if len(id) > len(stampLayout)+1 {
		if t, err := time.Parse(stampLayout, id[len(id)-len(stampLayout):]); err == nil {
			rel, rep.At = id[:len(id)-len(stampLayout)-1], t
		}
	}
	rel = strings.ReplaceAll(rel, "__", "/")
	rep.Path = filepath.Join(s.root, filepath.FromSlash(rel))
	rep.Kind, rep.Role, rep.Method = classify(rel)
	return rep
}

// ErrNoQuarantine is returned for a quarantine entry that does not exist.
var ErrNoQuarantine = errors.New("no such quarantine entry")

func (s *Store) pendingEntry(id string) (QuarantineReport, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." || strings.HasSuffix(id, whySuffix) {
		return QuarantineReport{}, fmt.Errorf("registry: %q: %w; list them with `forge quarantine ls`", id, ErrNoQuarantine)
	}
	if fi, err := os.Stat(filepath.Join(s.root, quarantineDir, id)); err != nil || fi.IsDir() {
		return QuarantineReport{}, fmt.Errorf("registry: %q: %w (or it was already restored or dismissed); list them with `forge quarantine ls`", id, ErrNoQuarantine)
	}
	return s.quarantineEntry(id), nil
}

// resolve moves a quarantine entry and its record to quarantine/resolved/.
func (s *Store) resolve(id string) error {
	dir := filepath.Join(s.root, quarantineDir, resolvedDir)
	if err := s.mkdirAll(dir, 0o755); err != nil {
		return writeErr(s.root, err)
	}
	src := filepath.Join(s.root, quarantineDir, id)
	if err := storepath.Check(s.root, src, "resolve a quarantine entry"); err != nil {
		return err
	}
	if err := os.Rename(src, filepath.Join(dir, id)); err != nil {
		return writeErr(s.root, err)
	}
	if err := os.Rename(src+whySuffix, filepath.Join(dir, id+whySuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return writeErr(s.root, err)
	}
	return syncDir(dir)
}

// Dismiss marks a quarantine entry as dealt with, without restoring it: it moves to
// quarantine/resolved/ (kept, never deleted) and Doctor stops reporting it.
func (s *Store) Dismiss(id string) (QuarantineReport, error) {
	rep, err := s.pendingEntry(id)
	if err != nil {
		return rep, err
	}
	return rep, s.resolve(id)
}

// RestoreReport says what Restore did.
type RestoreReport struct {
	Entry QuarantineReport `json:"entry"`
	// Action is what was done: "restored" (the file is back as it was), "accepted" (a hand edit
	// was taken over: a role's new contract fingerprint, or an artifact's edited code as a new
	// generation), or "kept" (the file could not be used, and what is in place — restored
	// automatically when it was quarantined — stays).
	Action string `json:"action"`
	Detail string `json:"detail"`
	// Role is set when a role's contract changed (a caller can list the artifacts it made stale).
	Role     *RoleRecord `json:"role,omitempty"`
	Previous *RoleRecord `json:"-"`
}

// Restore undoes a quarantine: the file goes back in place, and its entry to quarantine/resolved/.
// A hand-edited file is taken over (a role's contract gets its new fingerprint; an artifact's
// edited code becomes a new candidate generation on top of whatever is current, so its lineage
// and rollback are kept). A file that cannot be used at all is refused, with what to do — unless
// its content was already restored from a last-good copy, in which case the entry is resolved
// and what is in place stays.
func (s *Store) Restore(id string, now time.Time) (RestoreReport, error) {
	ent, err := s.pendingEntry(id)
	if err != nil {
		return RestoreReport{}, err
	}
	rr := RestoreReport{Entry: ent}
	// An entry planted as a link would restore a file from outside the store.
	if err := storepath.Check(s.root, ent.MovedTo, "restore"); err != nil {
		return rr, fmt.Errorf("registry: %w", err)
	}
	data, err := readStoreFile(ent.MovedTo)
	if errors.Is(err, ErrCorrupt) {
		data = nil // not a regular file, or over the bound: nothing in it can be used, like an emptied file
	} else if err != nil {
		return rr, fmt.Errorf("registry: read %s: %w", ent.MovedTo, err)
	}
	hint := fmt.Sprintf("fix the file by hand (%s) and run `forge quarantine restore %s` again, or `forge quarantine dismiss %s` to keep the store as it is", ent.MovedTo, id, id)
	switch ent.Kind {
	case QuarantineRole:
		err = s.restoreRole(&rr, data, now, hint)
	case QuarantineArtifact:
		err = s.restoreArtifact(&rr, data, now, hint)
	case QuarantineRegistry:
		rf, derr := decodeRegistry(data)
		if derr != nil {
			return rr, fmt.Errorf("registry: cannot restore %s: %w; %s", id, derr, hint)
		}
		if err = s.importRoles(rf, false); err == nil {
			rr.Action, rr.Detail = "restored", fmt.Sprintf("%d role(s) of the older registry imported into roles/ (roles that exist now were kept)", len(rf.Roles))
		}
	default:
		return rr, fmt.Errorf("registry: cannot restore %s: forge does not know what %s holds; move it back by hand or `forge quarantine dismiss %s`", id, ent.Path, id)
	}
	if err != nil {
		return rr, err
	}
	return rr, s.resolve(id)
}

func (s *Store) restoreRole(rr *RestoreReport, data []byte, now time.Time, hint string) error {
	name := rr.Entry.Role
	if err := ValidateName("role", name); err != nil {
		return err
	}
	rec, derr := decodeRole(data, name)
	action := "restored"
	if errors.Is(derr, errFingerprint) {
		// A hand-edited contract that is valid: take it over as `forge role add` would.
		var rf roleFile
		if err := json.Unmarshal(data, &rf); err != nil {
			return err
		}
		r := rf.RoleRecord
		r.Fingerprint, r.UpdatedAt = r.Contract.Fingerprint(), now.UTC()
		rec, derr, action = &r, nil, "accepted"
	}
	if derr != nil {
		if cur, err := s.Role(name); err == nil {
			rr.Action = "kept"
			rr.Detail = fmt.Sprintf("the quarantined file cannot be used (%v); role %s stays as it is now (fingerprint %s); the damaged file is kept in %s",
				derr, name, cur.Fingerprint, filepath.Join(s.root, quarantineDir, resolvedDir))
			return nil
		}
		return fmt.Errorf("registry: cannot restore %s: %w; %s", rr.Entry.ID, derr, hint)
	}
	out, err := s.updateRole(name, func(cur *RoleRecord) (*RoleRecord, error) {
		if cur != nil {
			p := *cur
			rr.Previous = &p
		}
		return rec, nil
	})
	if err != nil {
		return err
	}
	rr.Action, rr.Role = action, out
	rr.Detail = fmt.Sprintf("role %s is back (fingerprint %s)", name, out.Fingerprint)
	if action == "accepted" {
		rr.Detail = fmt.Sprintf("role %s: the hand-edited contract is taken over (new fingerprint %s)", name, out.Fingerprint)
	}
	return nil
}

func (s *Store) restoreArtifact(rr *RestoreReport, data []byte, now time.Time, hint string) error {
	role, method := rr.Entry.Role, rr.Entry.Method
	if err := validateKey(role, method); err != nil {
		return err
	}
	q, derr := DecodeArtifact(data)
	edited := false
	if derr != nil && errors.Is(derr, ErrCorrupt) {
		// Only the current code changed (a hand edit) can be taken over: everything else must hold.
		var a Artifact
		dec := json.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&a); err == nil && a.SchemaVersion == SchemaVersion && a.Role == role && a.Method == method &&
			a.Lifecycle.Valid() && a.CodeChecksum != Checksum(a.Code) && historyIntact(&a) {
			q, derr, edited = &a, nil, true
		}
	}
	if derr != nil {
		return fmt.Errorf("registry: cannot restore %s: %w; %s, or regenerate with `forge regen %s %s`", rr.Entry.ID, derr, hint, role, method)
	}
	if q.Role != role || q.Method != method {
		return fmt.Errorf("registry: cannot restore %s: it names %s.%s, not %s.%s; %s", rr.Entry.ID, q.Role, q.Method, role, method, hint)
	}
	_, err := s.Update(role, method, func(a *Artifact, exists bool) error {
		switch {
		case !exists && !edited:
			*a = *q
			rr.Action, rr.Detail = "restored", fmt.Sprintf("%s.%s is back at generation %d", role, method, a.Generation)
		case !exists:
			*a = *q
			a.Promote(q.Code, "operator:restore", q.Model, q.PromptVersion, now.UTC())
			a.Lifecycle = Candidate
			rr.Action, rr.Detail = "accepted", fmt.Sprintf("%s.%s: the hand-edited code is generation %d, a candidate (not verified by the gate: its calls prove it; `forge rollback %s %s` returns to the previous code)", role, method, a.Generation, role, method)
		case a.CodeChecksum == Checksum(q.Code):
			rr.Action, rr.Detail = "kept", fmt.Sprintf("%s.%s already runs this code (generation %d)", role, method, a.Generation)
		default:
			a.Promote(q.Code, "operator:restore", q.Model, q.PromptVersion, now.UTC())
			a.Lifecycle = Candidate
			a.RepairCountSinceRegen = 0
			a.LastFailureClass, a.LastFailureReason = "", ""
			rr.Action, rr.Detail = "accepted", fmt.Sprintf("%s.%s: the quarantined code is generation %d on top of the current one, a candidate (`forge rollback %s %s` returns to the previous code)", role, method, a.Generation, role, method)
		}
		return nil
	})
	return err
}

func historyIntact(a *Artifact) bool {
	for _, g := range a.History {
		if g.CodeChecksum != Checksum(g.Code) {
			return false
		}
	}
	return true
}

// writeErr adds advice to an error from writing into the store: a read-only store (permissions,
// read-only file system) says so and what to do.
func writeErr(root string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("%w: the store %s is read-only for this process; run forge as the store's owner, make it writable (chmod -R u+w %s), or pass --store with a writable directory", err, root, root)
	}
	return err
}
