package learner

import (
	"fmt"
	"sort"
	"strings"
)

// Caps bound the knowledge so that no prompt pays for an unbounded file: every recall reads and
// indexes a domain's whole document, and each lesson is sent as part of a prompt.
const (
	// DefaultMaxEntries is the default cap on the entries of one domain.
	DefaultMaxEntries = 1000
	// DefaultMaxBytes is the default cap on the size of one domain's document (estimated, see
	// EntrySize).
	DefaultMaxBytes = 1 << 20
	// DefaultMaxLessonBytes is the default cap on one lesson's content plus reasoning.
	DefaultMaxLessonBytes = 2048
	// ReadLimitFactor: a document over ReadLimitFactor × MaxBytes is not read at all but
	// quarantined (moved aside, never deleted); one between the cap and that is read, and its
	// entries over the cap are not recalled and go at the next write.
	ReadLimitFactor = 4
)

// entryOverhead approximates the bytes of an entry's fields other than its texts in a document.
const entryOverhead = 200

// Caps are the bounds a Store applies (Options.MaxEntries, MaxBytes, MaxLessonBytes after
// defaults; 0 means no cap).
type Caps struct {
	MaxEntries     int `json:"max_entries"`
	MaxBytes       int `json:"max_bytes"`
	MaxLessonBytes int `json:"max_lesson_bytes"`
}

// capsOf applies the defaults: 0 is the default, a negative value no cap (0 in Caps).
func capsOf(o Options) Caps {
	pick := func(v, def int) int {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return Caps{MaxEntries: pick(o.MaxEntries, DefaultMaxEntries), MaxBytes: pick(o.MaxBytes, DefaultMaxBytes),
		MaxLessonBytes: pick(o.MaxLessonBytes, DefaultMaxLessonBytes)}
}

// ReadLimit is the size over which a document is quarantined unread (0: none).
func (c Caps) ReadLimit() int64 { return int64(c.MaxBytes) * ReadLimitFactor }

// EntrySize is what an entry counts against a domain's byte cap: its texts plus a fixed
// allowance for its other fields (close to its size in the YAML document).
func EntrySize(e Entry) int {
	n := len(e.Content) + len(e.Reasoning) + len(e.Role) + len(e.Client) + entryOverhead
	for _, s := range e.Scope {
		n += len(s) + 4
	}
	return n
}

// lessonBytes is what a lesson counts against MaxLessonBytes.
func lessonBytes(e Entry) int { return len(e.Content) + len(e.Reasoning) }

// checkLesson refuses a lesson over the per-lesson cap, saying what to do.
func (c Caps) checkLesson(e Entry) error {
	if c.MaxLessonBytes > 0 && lessonBytes(e) > c.MaxLessonBytes {
		return fmt.Errorf("learner: the lesson is %d bytes (content and reasoning), over the cap of %d per lesson (FORGE_KNOWLEDGE_MAX_LESSON_BYTES): shorten it", lessonBytes(e), c.MaxLessonBytes)
	}
	return nil
}

// evictsBefore is the order in which entries go when a domain is over its caps: agents' lessons
// before forge's before operators' (so a client recording many lessons cannot push out the
// operator's), then the lowest confidence, then the oldest update.
func evictsBefore(a, b *Entry) bool {
	if ta, tb := a.Provenance().trust(), b.Provenance().trust(); ta != tb {
		return ta < tb
	}
	if a.Confidence != b.Confidence {
		return a.Confidence < b.Confidence
	}
	return a.UpdatedAt.Before(b.UpdatedAt)
}

// Trim returns the entries within c, in their order, and how many went: first every lesson over
// the per-lesson cap, then, while the domain is over its entry or byte cap, the entry that
// evictsBefore every other. entries is not changed.
func (c Caps) Trim(entries []Entry) ([]Entry, int) {
	keep := make([]bool, len(entries))
	n, size := 0, 0
	for i := range entries {
		if c.MaxLessonBytes > 0 && lessonBytes(entries[i]) > c.MaxLessonBytes {
			continue
		}
		keep[i] = true
		n++
		size += EntrySize(entries[i])
	}
	over := func() bool {
		return (c.MaxEntries > 0 && n > c.MaxEntries) || (c.MaxBytes > 0 && size > c.MaxBytes)
	}
	if over() {
		order := make([]int, 0, n)
		for i, k := range keep {
			if k {
				order = append(order, i)
			}
		}
		sort.SliceStable(order, func(i, j int) bool { return evictsBefore(&entries[order[i]], &entries[order[j]]) })
		for _, i := range order {
			if !over() {
				break
			}
			keep[i] = false
			n--
			size -= EntrySize(entries[i])
		}
	}
	if n == len(entries) {
		return entries, 0
	}
	out := make([]Entry, 0, n)
	for i, k := range keep {
		if k {
			out = append(out, entries[i])
		}
	}
	return out, len(entries) - n
}

// OversizeError is the reason a document over the read limit was quarantined unread.
type OversizeError struct {
	Document string
	Size     int64
	Limit    int64 // ReadLimitFactor × the per-domain byte cap
}

func (e *OversizeError) Error() string {
	return fmt.Sprintf("knowledge document %s is %s, over %s (%d × the per-domain cap of %s, FORGE_KNOWLEDGE_MAX_BYTES): set aside unread so that prompts stay fast; its lessons are kept there: to use some of them, raise FORGE_KNOWLEDGE_MAX_BYTES, move the file back, and forge keeps the best within the cap at the next write",
		e.Document, humanBytes(e.Size), humanBytes(e.Limit), ReadLimitFactor, humanBytes(e.Limit/ReadLimitFactor))
}

// humanBytes is n in B, KiB, MiB or GiB with one decimal.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// DomainStats is the state of one domain against the caps (`forge knowledge ls`, doctor).
type DomainStats struct {
	Domain   string `json:"domain"`
	Document string `json:"document"`
	Entries  int    `json:"entries"` // recalled (within the caps)
	Bytes    int    `json:"bytes"`   // estimated (EntrySize) over those entries
	// Over is how many entries of the document are over the caps: not recalled, and dropped by
	// the next write to the domain.
	Over int `json:"over_cap,omitempty"`
	// Dropped is how many entries this process's writes dropped over the caps.
	Dropped int `json:"dropped,omitempty"`
	// AtCap says that the domain is full: a new lesson makes the one that evicts first go.
	AtCap bool `json:"at_cap,omitempty"`
}

// Caps returns the caps the Store applies.
func (s *Store) Caps() Caps { return s.caps }

// Notices are the messages of the documents this Store set aside unread, over the read limit.
func (s *Store) Notices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.notices...)
}

// Stats returns each domain's state against the caps, by document name.
func (s *Store) Stats() ([]DomainStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if _, err := s.indexesLocked(nil); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(s.snaps))
	for n := range s.snaps {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]DomainStats, 0, len(names))
	for _, n := range names {
		sn := s.snaps[n]
		st := DomainStats{Document: n, Entries: len(sn.ix.entries), Over: sn.over, Dropped: s.dropped[n]}
		if len(sn.ix.entries) == 0 {
			st.Domain = strings.TrimSuffix(n, ".yaml")
		}
		for i := range sn.ix.entries {
			if st.Domain == "" {
				st.Domain = sn.ix.entries[i].Domain
			}
			st.Bytes += EntrySize(sn.ix.entries[i])
		}
		st.AtCap = sn.over > 0 || (s.caps.MaxEntries > 0 && st.Entries >= s.caps.MaxEntries) ||
			(s.caps.MaxBytes > 0 && st.Bytes+entryOverhead+256 > s.caps.MaxBytes)
		out = append(out, st)
	}
	return out, nil
}
