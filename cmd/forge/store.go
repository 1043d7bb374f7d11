package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox/wasm"
)

func init() {
	register(newRoleCmd)
	register(newLsCmd)
	register(newShowCmd)
	register(newHistoryCmd)
	register(newDoctorCmd)
}

// openStore opens the store named by the global flags, reporting quarantined files on stderr.
func (a *app) openStore() (*registry.Store, error) {
	dir, err := a.storeDir()
	if err != nil {
		return nil, err
	}
	s, err := registry.Open(dir)
	if err != nil {
		return nil, err
	}
	s.OnQuarantine = func(q registry.QuarantineReport) {
		fmt.Fprintf(a.stderr, "forge: quarantined damaged file %s -> %s: %s\n", q.Path, q.MovedTo, q.Reason)
	}
	return s, nil
}

func newRoleCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "role", Short: "Add, list and show role contracts"}
	var file, role, purpose string
	add := &cobra.Command{
		Use:   "add (-f contract.json | --role NAME --purpose TEXT)",
		Short: "Add a role contract, or replace the contract of an existing role",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var c registry.Contract
			switch {
			case file != "" && (role != "" || purpose != ""):
				return usagef("role add: give either -f FILE or --role/--purpose, not both")
			case file != "":
				data, err := readInput(file, cmd.InOrStdin())
				if err != nil {
					return err
				}
				if c, err = registry.DecodeContract(data); err != nil {
					return fmt.Errorf("%s: %w; fix the contract and run `forge role add -f %s` again", file, err, file)
				}
			case role != "" && purpose != "":
				c = registry.Contract{Role: role, Purpose: purpose}
			default:
				return usagef("role add: give -f contract.json, or both --role NAME and --purpose TEXT")
			}
			s, err := a.openStore()
			if err != nil {
				return err
			}
			rec, err := s.PutRole(c, time.Now())
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(rec)
			}
			fmt.Fprintf(a.stdout, "role %s saved (%s)\n", rec.Role, rec.Fingerprint)
			return nil
		},
	}
	add.Flags().StringVarP(&file, "file", "f", "", "contract JSON file (- for stdin)")
	add.Flags().StringVar(&role, "role", "", "role name for a minimal contract")
	add.Flags().StringVar(&purpose, "purpose", "", "purpose of a minimal contract")

	ls := &cobra.Command{
		Use:   "ls",
		Short: "List roles",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			s, err := a.openStore()
			if err != nil {
				return err
			}
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
				fmt.Fprintf(a.stdout, "no roles in %s; add one with `forge role add --role NAME --purpose TEXT`\n", s.Root())
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
		Args:  exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			s, err := a.openStore()
			if err != nil {
				return err
			}
			r, err := s.Role(args[0])
			if err != nil {
				return err
			}
			return a.printJSON(r) // the contract is JSON; text mode prints it too
		},
	}
	cmd.AddCommand(add, ls, show)
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
}

func newLsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "List method artifacts with lifecycle, generation, success/failure counts and last use",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			s, err := a.openStore()
			if err != nil {
				return err
			}
			rows := []artifactRow{}
			err = s.Each(func(k registry.Key, art *registry.Artifact, err error) error {
				row := artifactRow{Role: k.Role, Method: k.Method}
				if err != nil {
					row.Error = err.Error()
				} else {
					row.Lifecycle, row.Generation, row.LastUsedAt = art.Lifecycle, art.Generation, art.LastUsedAt
					row.SuccessCount, row.FailureCount = art.SuccessCount, art.FailureCount
				}
				rows = append(rows, row)
				return nil
			})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(rows)
			}
			if len(rows) == 0 {
				fmt.Fprintf(a.stdout, "no artifacts in %s\n", s.Root())
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ROLE\tMETHOD\tLIFECYCLE\tGEN\tOK\tFAILED\tLAST USED")
			for _, r := range rows {
				if r.Error != "" {
					fmt.Fprintf(tw, "%s\t%s\tERROR\t-\t-\t-\t%s\n", r.Role, r.Method, oneLine(r.Error, 80))
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", r.Role, r.Method, r.Lifecycle, r.Generation, r.SuccessCount, r.FailureCount, fmtTime(r.LastUsedAt))
			}
			return tw.Flush()
		},
	}
}

func newShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show ROLE METHOD",
		Short: "Show an artifact's code and metadata",
		Args:  exactArgs(2),
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
		Args:  exactArgs(2),
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
			return tw.Flush()
		},
	}
}

func newDoctorCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Verify every stored file (parse, checksum, schema); quarantine damage; exit 1 if any",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			s, err := a.openStore()
			if err != nil {
				return err
			}
			s.OnQuarantine = nil // reported below
			rep, err := s.Doctor()
			if err != nil {
				return err
			}
			// The wasm cache holds no stored data (everything in it can be rebuilt): doctor only
			// removes temp files that crashed writes left there and reports its size.
			cache, err := wasm.PruneCache(filepath.Join(s.Root(), "cache"), time.Time{}, false)
			if err != nil {
				return err
			}
			if a.jsonOut {
				if err := a.printJSON(struct {
					registry.DoctorReport
					Cache wasm.CacheReport `json:"cache"`
				}{rep, cache}); err != nil {
					return err
				}
			} else {
				for _, q := range rep.Quarantined {
					fmt.Fprintf(a.stdout, "quarantined %s -> %s: %s\n", q.Path, q.MovedTo, q.Reason)
				}
				for _, q := range rep.Incompatible {
					fmt.Fprintf(a.stdout, "incompatible (left in place) %s: %s\n", q.Path, q.Reason)
				}
				for _, p := range rep.TempRemoved {
					fmt.Fprintf(a.stdout, "removed leftover temp file %s\n", p)
				}
				for _, f := range cache.Removed {
					fmt.Fprintf(a.stdout, "removed leftover temp file %s\n", f.Path)
				}
				fmt.Fprintf(a.stdout, "checked %d file(s) in %s: %d damaged\n", rep.Checked, s.Root(), len(rep.Quarantined)+len(rep.Incompatible))
				if cache.Kept > 0 {
					fmt.Fprintf(a.stdout, "wasm cache: %d file(s), %s (`forge prune` removes what was not used for 30 days)\n", cache.Kept, humanBytes(cache.KeptBytes))
				}
			}
			if rep.Damaged() {
				return codedError{exitFailed, fmt.Errorf("doctor found %d damaged file(s); quarantined ones are in %s/quarantine — regenerate with `forge regen ROLE METHOD` or restore by hand",
					len(rep.Quarantined)+len(rep.Incompatible), s.Root())}
			}
			return nil
		},
	}
}

// loadArtifact reads role.method's artifact from the store, saying how one is created if it is missing.
func (a *app) loadArtifact(role, method string) (*registry.Artifact, error) {
	s, err := a.openStore()
	if err != nil {
		return nil, err
	}
	art, err := s.Load(role, method)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, fmt.Errorf("%w; it is created by the first `forge call %s %s`", err, role, method)
	}
	return art, err
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
