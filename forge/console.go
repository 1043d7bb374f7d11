package forge

import (
	"bytes"
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/artifactforge/forge/registry"
)

// The operator console's figures (forge serve's /ui, and anyone else on the same endpoints):
// the artifact table (one row per artifact, sorted, filtered and paged here, so that a store of
// 10,000 artifacts sends a page, not the store), and an artifact's activity over time and its
// recent failures, from the event log. Pure functions over plain data; the server only encodes.

// ArtifactRow is one row of the artifact table.
type ArtifactRow struct {
	Role       string `json:"role"`
	Method     string `json:"method"`
	Lifecycle  string `json:"lifecycle,omitempty"`
	Generation int    `json:"generation,omitempty"`
	Trigger    string `json:"trigger,omitempty"`
	// Calls and Failures are the artifact's counters (since its generation or its last bless
	// with reset); FailureRate is Failures/Calls, RecentFailureRate over its recent window.
	Calls             int64   `json:"calls"`
	Failures          int64   `json:"failures"`
	FailureRate       float64 `json:"failure_rate"`
	RecentFailureRate float64 `json:"recent_failure_rate"`
	LastFailureClass  string  `json:"last_failure_class,omitempty"`
	// LastFailureReason is filled for the rows of a page only (it is in the artifact's file, not
	// in the store's listing).
	LastFailureReason string     `json:"last_failure_reason,omitempty"`
	LastUsed          *time.Time `json:"last_used,omitempty"`
	ContractCurrent   bool       `json:"contract_current"`
	// Error is why the artifact could not be read (the other fields are then empty).
	Error string `json:"error,omitempty"`
}

// RowOf is a listed artifact's row.
func RowOf(l *Listed) ArtifactRow {
	r := ArtifactRow{Role: l.Role, Method: l.Method}
	if l.Err != nil {
		r.Error = l.Err.Error()
		return r
	}
	r.Lifecycle, r.Generation, r.Trigger = string(l.Lifecycle), l.Generation, l.Trigger
	r.Calls = l.SuccessCount + l.FailureCount
	r.Failures = l.FailureCount
	r.FailureRate = ratio(l.FailureCount, r.Calls)
	r.RecentFailureRate = l.RecentFailureRate
	r.LastFailureClass = l.LastFailureClass
	r.LastUsed = l.LastUsedAt
	r.ContractCurrent = l.ContractCurrent()
	return r
}

// TableQuery selects a page of the artifact table.
type TableQuery struct {
	// Sort is a column (TableSortKeys; default "name": role, then method); Desc reverses it.
	Sort string
	Desc bool
	// Search keeps the rows whose "role.method" contains it (case-insensitive); Lifecycle the
	// rows of that lifecycle ("unreadable": the rows with an Error).
	Search    string
	Lifecycle string
	// Offset and Limit page the result (Limit 0: DefaultTableLimit; at most MaxTableLimit).
	Offset, Limit int
}

// Bounds of a table page.
const (
	DefaultTableLimit = 100
	MaxTableLimit     = 1000
)

// TableSortKeys are the columns the table sorts by.
var TableSortKeys = []string{"name", "lifecycle", "generation", "calls", "failures", "failure_rate", "recent_failure_rate", "last_failure_class", "last_used"}

// TablePage is one page of the artifact table.
type TablePage struct {
	// Total is how many rows pass the query's filters; All how many artifacts there are.
	Total  int           `json:"total"`
	All    int           `json:"all"`
	Offset int           `json:"offset"`
	Limit  int           `json:"limit"`
	Sort   string        `json:"sort"`
	Desc   bool          `json:"desc"`
	Rows   []ArtifactRow `json:"rows"`
	// Lifecycles counts every artifact by lifecycle (before the filters): the quarantine queue's
	// length is Lifecycles["quarantined"].
	Lifecycles map[string]int `json:"lifecycles"`
}

// ArtifactTable filters, sorts and pages rows. An unknown sort key or a negative offset is an
// error that names what to write.
func ArtifactTable(rows []ArtifactRow, q TableQuery) (TablePage, error) {
	if err := q.Check(); err != nil {
		return TablePage{}, err
	}
	if q.Sort == "" {
		q.Sort = "name"
	}
	cmpOf := tableCompare(q.Sort)
	switch {
	case q.Limit <= 0:
		q.Limit = DefaultTableLimit
	case q.Limit > MaxTableLimit:
		q.Limit = MaxTableLimit
	}
	p := TablePage{All: len(rows), Offset: q.Offset, Limit: q.Limit, Sort: q.Sort, Desc: q.Desc, Lifecycles: map[string]int{}}
	search := strings.ToLower(q.Search)
	kept := make([]*ArtifactRow, 0, len(rows)) // pointers: a row is ~200 bytes, and sorting swaps
	for i := range rows {
		r := &rows[i]
		lc := rowLifecycle(r)
		p.Lifecycles[lc]++
		if q.Lifecycle != "" && q.Lifecycle != lc {
			continue
		}
		if search != "" && !strings.Contains(strings.ToLower(r.Role+"."+r.Method), search) {
			continue
		}
		kept = append(kept, r)
	}
	slices.SortStableFunc(kept, func(a, b *ArtifactRow) int {
		c := cmpOf(a, b)
		if q.Desc {
			c = -c
		}
		if c == 0 { // ties in name order, always ascending: a stable page boundary
			c = cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Method, b.Method))
		}
		return c
	})
	p.Total = len(kept)
	lo := min(q.Offset, len(kept))
	hi := min(lo+q.Limit, len(kept))
	p.Rows = make([]ArtifactRow, 0, hi-lo)
	for _, r := range kept[lo:hi] {
		p.Rows = append(p.Rows, *r)
	}
	return p, nil
}

// Check reports a query that cannot be answered (an unknown sort key, a negative offset), saying
// what to write.
func (q TableQuery) Check() error {
	if q.Sort != "" && tableCompare(q.Sort) == nil {
		return fmt.Errorf("sort=%q is not a column: use one of %s", q.Sort, strings.Join(TableSortKeys, ", "))
	}
	if q.Offset < 0 {
		return fmt.Errorf("offset=%d: an offset is 0 or more", q.Offset)
	}
	return nil
}

// rowLifecycle is the lifecycle a row is filtered and counted under.
func rowLifecycle(r *ArtifactRow) string {
	if r.Error != "" {
		return "unreadable"
	}
	return r.Lifecycle
}

func tableCompare(key string) func(a, b *ArtifactRow) int {
	switch key {
	case "name":
		return func(a, b *ArtifactRow) int { return 0 } // the tie-break is name order
	case "lifecycle":
		return func(a, b *ArtifactRow) int { return cmp.Compare(rowLifecycle(a), rowLifecycle(b)) }
	case "generation":
		return func(a, b *ArtifactRow) int { return cmp.Compare(a.Generation, b.Generation) }
	case "calls":
		return func(a, b *ArtifactRow) int { return cmp.Compare(a.Calls, b.Calls) }
	case "failures":
		return func(a, b *ArtifactRow) int { return cmp.Compare(a.Failures, b.Failures) }
	case "failure_rate":
		return func(a, b *ArtifactRow) int { return cmp.Compare(a.FailureRate, b.FailureRate) }
	case "recent_failure_rate":
		return func(a, b *ArtifactRow) int { return cmp.Compare(a.RecentFailureRate, b.RecentFailureRate) }
	case "last_failure_class":
		return func(a, b *ArtifactRow) int { return cmp.Compare(a.LastFailureClass, b.LastFailureClass) }
	case "last_used":
		return func(a, b *ArtifactRow) int { return compareTimes(a.LastUsed, b.LastUsed) }
	}
	return nil
}

// compareTimes orders never (nil) before any time.
func compareTimes(a, b *time.Time) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return a.Compare(*b)
}

// ArtifactTable is the store's artifact table, one page of it (see ArtifactTable): the rows of
// the page that failed get their last failure's reason from their artifact's file.
func (f *Forge) ArtifactTable(q TableQuery) (TablePage, error) {
	ls, err := List(f.store)
	if err != nil {
		return TablePage{}, err
	}
	rows := make([]ArtifactRow, len(ls))
	for i := range ls {
		rows[i] = RowOf(&ls[i])
	}
	p, err := ArtifactTable(rows, q)
	if err != nil {
		return p, err
	}
	for i := range p.Rows {
		r := &p.Rows[i]
		if r.Error != "" || r.LastFailureClass == "" {
			continue
		}
		if a, err := f.store.Load(r.Role, r.Method); err == nil {
			r.LastFailureReason = a.LastFailureReason
		}
	}
	return p, nil
}

// TimePoint is one interval of an artifact's activity: calls counted at their line's time (an
// aggregate's calls at its last call's).
type TimePoint struct {
	Start         time.Time `json:"start"`
	Calls         int64     `json:"calls"`
	Failures      int64     `json:"failures"`
	ProviderCalls int64     `json:"provider_calls"`
	Repairs       int64     `json:"repairs"`
}

// FailureLine is one failed call of an artifact, from the event log.
type FailureLine struct {
	Time       time.Time `json:"time"`
	Class      string    `json:"class"`
	Rule       string    `json:"rule,omitempty"`
	Type       string    `json:"type,omitempty"`
	Action     string    `json:"action,omitempty"`
	Generation int       `json:"generation,omitempty"`
	Repaired   bool      `json:"repaired,omitempty"`
	TraceID    ID        `json:"trace_id,omitempty"`
}

// Activity is an artifact's counters over time and its recent failures.
type Activity struct {
	Role     string        `json:"role"`
	Method   string        `json:"method"`
	From     time.Time     `json:"from"`
	To       time.Time     `json:"to"`
	Step     time.Duration `json:"step_ns"`
	Timeline []TimePoint   `json:"timeline"`
	// Failures are the newest failed calls, newest first.
	Failures []FailureLine `json:"failures"`
}

// Bounds of Activity.
const (
	DefaultActivityBuckets  = 48
	MaxActivityBuckets      = 500
	DefaultActivityFailures = 20
)

// ComputeActivity is role.method's activity in [from, to) in buckets intervals of equal length
// (at least 1, at most MaxActivityBuckets), and its nFailures newest failed calls in that range.
// Operator actions and drop records are not calls and are left out.
func ComputeActivity(events []Event, role, method string, from, to time.Time, buckets, nFailures int) Activity {
	buckets = min(max(buckets, 1), MaxActivityBuckets)
	if !to.After(from) {
		to = from.Add(time.Duration(buckets))
	}
	step := max(to.Sub(from)/time.Duration(buckets), 1)
	a := Activity{Role: role, Method: method, From: from, To: to, Step: step, Timeline: make([]TimePoint, buckets), Failures: []FailureLine{}}
	for i := range a.Timeline {
		a.Timeline[i].Start = from.Add(time.Duration(i) * step)
	}
	for i := range events {
		e := &events[i]
		if e.Role != role || e.Method != method || e.Kind == EventDropped || IsOperatorAction(e) ||
			e.Time.Before(from) || !e.Time.Before(to) {
			continue
		}
		b := min(int(e.Time.Sub(from)/step), buckets-1)
		n := e.Calls()
		tp := &a.Timeline[b]
		tp.Calls += n
		tp.ProviderCalls += int64(e.ProviderCalls)
		if e.RepairAttempted {
			tp.Repairs += n
		}
		if !e.OK {
			tp.Failures += n
			a.Failures = append(a.Failures, FailureLine{Time: e.Time, Class: e.FailureClass, Rule: e.FailureRule, Type: e.FailureType,
				Action: e.Action, Generation: e.ArtifactGen, Repaired: e.RepairSucceeded, TraceID: e.TraceID})
		}
	}
	slices.SortStableFunc(a.Failures, func(x, y FailureLine) int { return y.Time.Compare(x.Time) })
	if nFailures >= 0 && len(a.Failures) > nFailures {
		a.Failures = a.Failures[:nFailures]
	}
	return a
}

// Activity is role.method's activity over the last span (ComputeActivity), from this forge's
// store's event log after writing queued events. A role.method the store does not hold is
// registry.ErrNotFound.
func (f *Forge) Activity(role, method string, span time.Duration, buckets, nFailures int) (Activity, error) {
	if _, err := f.store.Load(role, method); err != nil {
		return Activity{}, err
	}
	if f.events != nil {
		f.events.sync()
	}
	evs, err := readRotatedLines(filepath.Join(f.store.LocalDir(), "events", "forge.jsonl"), linesOf(role, method))
	if err != nil {
		return Activity{}, err
	}
	to := f.now()
	return ComputeActivity(evs, role, method, to.Add(-span), to.Add(time.Nanosecond), buckets, nFailures), nil
}

// linesOf is a test on an event line's raw bytes that every line of role.method passes: its
// "role" and "method" fields as the event writer spells them (eventjson.go, the same escaping as
// encoding/json).
func linesOf(role, method string) func([]byte) bool {
	r := appendString([]byte(`"role":`), role)
	m := appendString([]byte(`"method":`), method)
	return func(line []byte) bool { return bytes.Contains(line, r) && bytes.Contains(line, m) }
}

// StoreQuarantine lists the files the store set aside as damaged (registry.Maintainer's
// Quarantined), for restore or dismiss.
func (f *Forge) StoreQuarantine() ([]registry.QuarantineReport, error) {
	m, err := f.Maintainer()
	if err != nil {
		return nil, err
	}
	q, err := m.Quarantined()
	if q == nil {
		q = []registry.QuarantineReport{}
	}
	return q, err
}
