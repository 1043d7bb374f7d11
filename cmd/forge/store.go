package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

func init() {
	register(newRoleCmd)
	register(newLsCmd)
	register(newShowCmd)
	register(newHistoryCmd)
	register(newDoctorCmd)
}

// openStoreRO opens the store for a read-only command: a store that does not exist is an error
// that says so, not a new empty store.
func (a *app) openStoreRO() (registry.Backend, error) { return a.openStoreWith(true) }

// openStoreWith opens the store --store or $FORGE_STORE names: a directory, or the URL of a
// registered backend (registry.OpenBackend). The caller closes it.
func (a *app) openStoreWith(mustExist bool) (registry.Backend, error) {
	spec, err := a.storeDir()
	if err != nil {
		return nil, err
	}
	return registry.OpenBackend(spec, registry.OpenOptions{MustExist: mustExist, OnQuarantine: a.reportQuarantine,
		LocalDir: localDir(), ClientName: a.clientName()})
}

// clientName is the name a networked store's servers see for this process.
func (a *app) clientName() string {
	if a.client == "" {
		return "forge"
	}
	return a.client
}

// localStoreDir is the directory on this machine for the store's unshared state (caches): the
// store directory itself, or for a URL store $FORGE_LOCAL_DIR, else the backend's default (which
// takes opening the store).
func (a *app) localStoreDir() (string, error) {
	spec, err := a.storeDir()
	if err != nil || !registry.IsURL(spec) {
		return spec, err
	}
	if d := localDir(); d != "" {
		return d, nil
	}
	s, err := a.openStoreWith(false)
	if err != nil {
		return "", err
	}
	defer s.Close()
	return s.LocalDir(), nil
}

// localDir is $FORGE_LOCAL_DIR: a networked store's directory on this machine (forge.Options.LocalDir).
func localDir() string { return strings.TrimSpace(os.Getenv("FORGE_LOCAL_DIR")) }

// openMaintainer opens the store for a command that checks or repairs its records (doctor,
// quarantine): a directory store and the fleet store offer it; a backend that does not is an
// error naming the store and what to do.
func (a *app) openMaintainer(mustExist bool) (registry.Backend, registry.Maintainer, error) {
	s, err := a.openStoreWith(mustExist)
	if err != nil {
		return nil, nil, err
	}
	m, err := forge.MaintainerOf(s)
	if err != nil {
		_ = s.Close()
		return nil, nil, err
	}
	return s, m, nil
}

func (a *app) reportQuarantine(q registry.QuarantineReport) {
	if q.MovedTo != "" {
		fmt.Fprintf(a.stderr, "forge: quarantined damaged file %s -> %s: %s\n", q.Path, q.MovedTo, q.Reason)
	}
	if q.Restored != "" {
		fmt.Fprintf(a.stderr, "forge: %s\n", q.Restored)
	}
	fmt.Fprintf(a.stderr, "forge: see `forge quarantine ls`; `forge doctor` fails until it is restored or dismissed\n")
}

func printStale(a *app, rows []forge.StaleArtifact) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(a.stdout, "the contract changed: %d artifact(s) are stale now:\n", len(rows))
	for _, r := range rows {
		fmt.Fprintf(a.stdout, "  %s.%s: %s\n", r.Role, r.Method, r.Why)
	}
}

func newRoleCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "role", Short: "Add, list and show role contracts"}
	var file, role, purpose string
	var dryRun bool
	add := &cobra.Command{
		Use:   "add (-f contract.json | --role NAME --purpose TEXT)",
		Short: "Add a role contract, or replace the contract of an existing role",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case file != "" && (role != "" || purpose != ""):
				return usagef("role add: give either -f FILE or --role/--purpose, not both")
			case file == "" && (role == "" || purpose == ""):
				return usagef("role add: give -f contract.json, or both --role NAME and --purpose TEXT")
			}
			// Every problem is named before anything is written (health hook: rolecheck.go).
			c, ps, err := checkedContract(file, role, purpose, func() ([]byte, error) { return readInput(file, cmd.InOrStdin()) })
			if err != nil {
				return err
			}
			what, again := "role add", "forge role add"
			if file != "" {
				what, again = file, "forge role add -f "+file
			}
			switch {
			case dryRun:
				return reportCheck(a, what, c, ps, again)
			case len(ps) > 0:
				return fmt.Errorf("%s: %w; fix the contract and run `%s` again", what, registry.Refusal(c.Role, ps), again)
			}
			f, err := a.openForge()
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			rec, stale, err := f.PutContract(operatorCtx(context.Background()), c)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(struct {
					OK bool `json:"ok"`
					registry.RoleRecord
					Stale []forge.StaleArtifact `json:"stale_artifacts"`
				}{true, rec, nonNil(stale)})
			}
			fmt.Fprintf(a.stdout, "role %s saved (%s)\n", rec.Role, rec.Fingerprint)
			printStale(a, stale)
			return nil
		},
	}
	add.Flags().StringVarP(&file, "file", "f", "", "contract JSON file (- for stdin)")
	add.Flags().StringVar(&role, "role", "", "role name for a minimal contract")
	add.Flags().StringVar(&purpose, "purpose", "", "purpose of a minimal contract")
	add.Flags().BoolVar(&dryRun, "dry-run", false, "check the contract (every problem, as `forge role check`) and write nothing")

	ls := &cobra.Command{
		Use:   "ls",
		Short: "List roles",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			s, err := a.openStoreRO()
			if err != nil {
				return err
			}
			defer s.Close()
			roles, err := s.Roles()
			if err != nil {
				return err
			}
			if a.jsonOut {
				if roles == nil {
					roles = []*registry.RoleRecord{}
				}
				return a.printJSON(roles)
			}
			if len(roles) == 0 {
				fmt.Fprintf(a.stdout, "no roles in %s; add one with `forge role add --role NAME --purpose TEXT`\n", s.Location())
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ROLE\tMETHODS\tUSES\tLAST USED\tPURPOSE")
			for _, r := range roles {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", r.Role, len(r.Methods), r.UsageCount, fmtTime(r.LastUsedAt), oneLine(r.Purpose, 60))
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use:   "show ROLE",
		Short: "Show a role's contract",
		Args:  nameArgs(1, 1, "role"),
		RunE: func(_ *cobra.Command, args []string) error {
			s, err := a.openStoreRO()
			if err != nil {
				return err
			}
			defer s.Close()
			r, err := s.Role(args[0])
			if err != nil {
				return err
			}
			return a.printJSON(r) // the contract is JSON; text mode prints it too
		},
	}
	cmd.AddCommand(add, ls, show, newRoleCheckCmd(a))
	return cmd
}

func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// artifactRow is one line of `forge ls`.
type artifactRow struct {
	Role         string             `json:"role"`
	Method       string             `json:"method"`
	Lifecycle    registry.Lifecycle `json:"lifecycle"`
	Generation   int                `json:"generation"`
	SuccessCount int64              `json:"success_count"`
	FailureCount int64              `json:"failure_count"`
	LastUsedAt   *time.Time         `json:"last_used_at,omitempty"`
	Error        string             `json:"error,omitempty"`
	// Quarantine is set for an artifact whose file the store moved to quarantine/ (damaged or
	// edited by hand) and that has no file in its place: it is listed, not lost.
	Quarantine *registry.QuarantineReport `json:"quarantine,omitempty"`
}

func newLsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "List method artifacts with lifecycle, generation, success/failure counts and last use",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			s, err := a.openStoreRO()
			if err != nil {
				return err
			}
			defer s.Close()
			ls, err := forge.List(s) // the summary index: no artifact file is read unless it changed
			if err != nil {
				return err
			}
			rows := make([]artifactRow, 0, len(ls))
			for i := range ls {
				l := &ls[i]
				row := artifactRow{Role: l.Role, Method: l.Method, Quarantine: l.Quarantine}
				switch {
				case l.Quarantine != nil:
					row.Lifecycle, row.Error = registry.Quarantined, "the file was quarantined: "+l.Quarantine.Reason
				case l.Err != nil:
					row.Error = l.Err.Error()
				default:
					row.Lifecycle, row.Generation, row.LastUsedAt = l.Lifecycle, l.Generation, l.LastUsedAt
					row.SuccessCount, row.FailureCount = l.SuccessCount, l.FailureCount
				}
				rows = append(rows, row)
			}
			if a.jsonOut {
				return a.printJSON(rows)
			}
			if len(rows) == 0 {
				fmt.Fprintf(a.stdout, "no artifacts in %s\n", s.Location())
				return nil
			}
			// Columns are laid out here rather than by text/tabwriter (same output: left-aligned,
			// two spaces between columns): tabwriter keeps every cell and writes cell by cell,
			// which at 10,000 rows cost more than reading the index.
			table := make([][7]string, 0, len(rows)+1)
			table = append(table, [7]string{"ROLE", "METHOD", "LIFECYCLE", "GEN", "OK", "FAILED", "LAST USED"})
			for _, r := range rows {
				switch {
				case r.Quarantine != nil:
					q := r.Quarantine
					table = append(table, [7]string{r.Role, r.Method, "QUARANTINED", "-", "-", "-", fmt.Sprintf("%s (`forge quarantine restore %s`)", oneLine(shortReason(q.Reason), 80), q.ID)})
				case r.Error != "":
					table = append(table, [7]string{r.Role, r.Method, "ERROR", "-", "-", "-", oneLine(r.Error, 80)})
				default:
					table = append(table, [7]string{r.Role, r.Method, string(r.Lifecycle), strconv.Itoa(r.Generation),
						strconv.FormatInt(r.SuccessCount, 10), strconv.FormatInt(r.FailureCount, 10), fmtTime(r.LastUsedAt)})
				}
			}
			return writeTable(a.stdout, table)
		},
	}
}

// writeTable writes rows as left-aligned columns two spaces apart (the last column unpadded), as
// text/tabwriter with padding 2 does, through one buffer.
func writeTable[R ~[7]string](w io.Writer, rows []R) error {
	var width [7]int
	for _, r := range rows {
		for c := 0; c < len(r)-1; c++ {
			if n := utf8.RuneCountInString(r[c]); n > width[c] {
				width[c] = n
			}
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	spaces := strings.Repeat(" ", 128)
	for _, r := range rows {
		for c := 0; c < len(r)-1; c++ {
			bw.WriteString(r[c])
			for pad := width[c] + 2 - utf8.RuneCountInString(r[c]); pad > 0; pad -= len(spaces) {
				bw.WriteString(spaces[:min(pad, len(spaces))])
			}
		}
		bw.WriteString(r[len(r)-1])
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// shortReason is the part of a quarantine reason after the path that it names.
func shortReason(r string) string {
	if _, after, ok := strings.Cut(r, registry.ErrCorrupt.Error()+": "); ok {
		return after
	}
	return r
}

func newShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show ROLE METHOD",
		Short: "Show an artifact's code and metadata",
		Args:  nameArgs(2, 2, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			art, err := a.loadArtifact(args[0], args[1])
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(art)
			}
			w := a.stdout
			fmt.Fprintf(w, "%s.%s  gen %d  %s\n", art.Role, art.Method, art.Generation, art.Lifecycle)
			if art.ForceRegenerate {
				fmt.Fprintf(w, "pending:     regenerate on its next call (`forge regen %s %s --next-call`); `forge regen %s %s` does it now\n", art.Role, art.Method, art.Role, art.Method)
			}
			fmt.Fprintf(w, "signature:   %s\n", art.Signature.Decl)
			fmt.Fprintf(w, "checksum:    %s\n", art.CodeChecksum)
			fmt.Fprintf(w, "contract:    %s\n", art.ContractFingerprint)
			fmt.Fprintf(w, "model:       %s (prompt %s, runtime %s)\n", art.Model, art.PromptVersion, art.RuntimeVersion)
			fmt.Fprintf(w, "calls:       %d ok, %d failed (intrinsic %d, adaptive %d, extrinsic %d, caller %d); recent failure rate %.2f\n",
				art.SuccessCount, art.FailureCount, art.IntrinsicFailureCount, art.AdaptiveFailureCount, art.ExtrinsicFailureCount, art.CallerFailureCount, art.RecentFailureRate)
			if art.LastFailureClass != "" {
				fmt.Fprintf(w, "last failure: %s: %s\n", art.LastFailureClass, art.LastFailureReason)
			}
			fmt.Fprintf(w, "repairs since regeneration: %d\n", art.RepairCountSinceRegen)
			fmt.Fprintf(w, "created %s, last used %s\n\n", fmtTime(&art.CreatedAt), fmtTime(art.LastUsedAt))
			fmt.Fprintln(w, strings.TrimRight(art.Code, "\n"))
			return nil
		},
	}
}

func newHistoryCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "history ROLE METHOD",
		Short: "Show the kept generations of an artifact (newest first)",
		Args:  nameArgs(2, 2, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			art, err := a.loadArtifact(args[0], args[1])
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(art.History)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "GEN\tPARENT\tTRIGGER\tCREATED\tCHECKSUM\tCURRENT")
			for _, g := range art.History {
				cur := ""
				if g.ID == registry.GenerationID(art.Generation) {
					cur = "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, orDash(g.ParentID), g.Trigger, fmtTime(&g.CreatedAt), shortSum(g.CodeChecksum), cur)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			printHistoryReplays(a, art.History)
			return nil
		},
	}
}

func newDoctorCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Verify every stored file; quarantine damage (restoring roles); exit 1 while any quarantine is pending",
		Long: `Doctor verifies every role and artifact of the store (parse, schema, names, contract and its
fingerprint, code checksums), quarantines what is damaged — a role is restored from its last-good
copy at once — and removes temp files crashed writers left. It exits 1 while any quarantine is
pending, including those made earlier by other commands (opening the store, a call); deal with
each with ` + "`forge quarantine restore ID` or `forge quarantine dismiss ID`" + `.`,
		Args: exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			s, m, err := a.openMaintainer(true)
			if err != nil {
				return err
			}
			defer s.Close()
			if ds, ok := s.(*registry.Store); ok {
				ds.OnQuarantine = nil // reported below
			}
			kn := a.doctorKnowledge(s) // first: a knowledge file over the read limit is quarantined now
			rep, err := m.Doctor()
			if err != nil {
				return err
			}
			// The wasm cache holds no stored data (everything in it can be rebuilt): doctor only
			// removes temp files that crashed writes left there and reports its size.
			cache, err := forge.PruneCaches(s.LocalDir(), time.Time{}, false)
			if err != nil {
				return err
			}
			// Events the running forges could not log (their queue was full) are not damage, but
			// never silent either.
			dropped, err := forge.DroppedEvents(s.LocalDir())
			if err != nil {
				return err
			}
			if a.jsonOut {
				if err := a.printJSON(struct {
					OK bool `json:"ok"`
					registry.DoctorReport
					Cache         sandbox.CacheReport `json:"cache"`
					EventsDropped int64               `json:"events_dropped"`
					Knowledge     *knowledgeReport    `json:"knowledge,omitempty"`
				}{!rep.Damaged(), rep, cache, dropped, kn}); err != nil {
					return err
				}
			} else {
				if dropped > 0 {
					fmt.Fprintf(a.stdout, "events dropped: %d (the event queue was full; see events/dropped.jsonl — the calls ran, their events were not logged)\n", dropped)
				}
				kn.print(a)
				for _, q := range rep.Quarantined {
					fmt.Fprintf(a.stdout, "quarantined now %s -> %s: %s\n", q.Path, q.MovedTo, q.Reason)
				}
				for _, q := range rep.Pending {
					fmt.Fprintf(a.stdout, "in quarantine: %s (%s, %s): %s\n", q.ID, quarantineWhat(q), fmtTime(&q.At), q.Reason)
					if q.Restored != "" {
						fmt.Fprintf(a.stdout, "  restored: %s\n", q.Restored)
					}
				}
				for _, q := range rep.Incompatible {
					fmt.Fprintf(a.stdout, "incompatible (left in place) %s: %s\n", q.Path, q.Reason)
				}
				for _, p := range rep.TempRemoved {
					fmt.Fprintf(a.stdout, "removed leftover temp file %s\n", p)
				}
				for _, p := range rep.OpenToAll {
					fmt.Fprintf(a.stdout, "writable by every user (forge will not read it): %s — run `chmod o-w %s` and check what it holds\n", p, p)
				}
				for _, f := range cache.Removed {
					fmt.Fprintf(a.stdout, "removed leftover temp file %s\n", f.Path)
				}
				what := "file(s)"
				if s.Location() != s.LocalDir() { // a networked store checks records, not files
					what = "record(s)"
				}
				fmt.Fprintf(a.stdout, "checked %d %s in %s: %d damaged, %d in quarantine\n", rep.Checked, what, s.Location(), len(rep.Quarantined)+len(rep.Incompatible), len(rep.Pending))
				if cache.Kept > 0 {
					fmt.Fprintf(a.stdout, "wasm cache: %d file(s), %s (`forge prune` removes what was not used for 30 days)\n", cache.Kept, humanBytes(cache.KeptBytes))
				}
			}
			if len(rep.OpenToAll) > 0 {
				return codedError{exitFailed, fmt.Errorf("doctor found %d store path(s) every user may write; run `chmod o-w` on each (listed above), check what they hold, and run forge doctor again",
					len(rep.OpenToAll))}
			}
			if rep.Damaged() {
				return codedError{exitFailed, fmt.Errorf("doctor found damage: %d file(s) in quarantine, %d incompatible; see `forge quarantine ls`, then `forge quarantine restore ID` (or `dismiss ID`) for each, or regenerate with `forge regen ROLE METHOD`",
					len(rep.Pending), len(rep.Incompatible))}
			}
			return nil
		},
	}
}

// loadArtifact reads role.method's artifact from the store; a missing one says why
// (forge.LoadArtifact).
func (a *app) loadArtifact(role, method string) (*registry.Artifact, error) {
	s, err := a.openStoreRO()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return forge.LoadArtifact(s, role, method)
}

func fmtTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		return s[:max-1] + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func shortSum(s string) string {
	if len(s) > 19 {
		return s[:19]
	}
	return s
}
