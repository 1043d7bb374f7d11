package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

func init() { register(newStoreCmd) }

// newStoreCmd is the group of commands that work on a whole store.
func newStoreCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "store", Short: "Work on a whole store: copy it to another backend (migrate)"}
	cmd.AddCommand(newMigrateCmd(a))
	return cmd
}

func newMigrateCmd(a *app) *cobra.Command {
	var from, to string
	var force bool
	cmd := &cobra.Command{
		Use:   "migrate --from SPEC --to SPEC [--force]",
		Short: "Copy a store (roles, artifacts with their history and counters, knowledge) into another, and verify the copy",
		Long: `Migrate copies every role, every artifact with its kept generations, lifecycle and counters, and
the knowledge documents from one store into another, then reads the destination back and compares
it with what was copied. SPEC is a store directory or a URL (nats://HOST:PORT/NAME); copy a
directory store into the fleet store and back:

  forge store migrate --from ~/.local/state/forge --to nats://127.0.0.1:4222/forge
  forge store migrate --from nats://127.0.0.1:4222/forge --to ./forge-copy

Records are written exactly as they are (generation numbers, counters, times): nothing is
regenerated. The destination must be empty unless --force, which replaces the records of the same
names and keeps the others. Stop the processes that write to the source first: calls made during
the copy may be missed. What is local to each machine (the event log, compiled-code caches) is not
copied.`,
		Args: exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			if from == "" || to == "" {
				return usagef("store migrate: both --from and --to are needed (a store directory or a URL such as nats://127.0.0.1:4222/forge)")
			}
			if registry.SameStore(from, to) {
				return usagef("store migrate: --from and --to name the same store (%s); name another destination", from)
			}
			open := func(spec string, mustExist bool) (registry.Backend, error) {
				return registry.OpenBackend(spec, registry.OpenOptions{MustExist: mustExist, OnQuarantine: a.reportQuarantine,
					LocalDir: localDir(), ClientName: a.clientName()})
			}
			src, err := open(from, true)
			if err != nil {
				return fmt.Errorf("store migrate: open the source: %w", err)
			}
			defer src.Close()
			dst, err := open(to, false)
			if err != nil {
				return fmt.Errorf("store migrate: open the destination: %w", err)
			}
			defer dst.Close()
			rep, err := forge.Migrate(src, dst, force, func() (registry.Backend, error) { return open(to, true) })
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(struct {
					OK bool `json:"ok"`
					forge.MigrateReport
				}{true, rep})
			}
			printMigrateReport(a.stdout, &rep)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the store to copy: a directory or a URL (nats://HOST:PORT/NAME)")
	cmd.Flags().StringVar(&to, "to", "", "the store to copy into: a directory (created if needed) or a URL")
	cmd.Flags().BoolVar(&force, "force", false, "copy into a destination that already holds records, replacing those of the same names")
	return cmd
}

// printMigrateReport writes what a migration copied, for a person.
func printMigrateReport(w io.Writer, r *forge.MigrateReport) {
	fmt.Fprintf(w, "copied %s -> %s\n", r.From, r.To)
	fmt.Fprintf(w, "  roles:      %d\n", r.Roles)
	fmt.Fprintf(w, "  artifacts:  %d (%d kept generations, counters of %d calls)\n", r.Artifacts, r.Generations, r.Calls)
	fmt.Fprintf(w, "  knowledge:  %d documents", len(r.Knowledge))
	if len(r.Knowledge) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(r.Knowledge, ", "))
	}
	fmt.Fprintln(w)
	if r.Replaced {
		fmt.Fprintln(w, "  the destination held records: those of the same names were replaced, the others kept (--force)")
	}
	if r.Quarantined > 0 {
		fmt.Fprintf(w, "  not copied: %d quarantined records of the source (see `forge quarantine ls --store %s`)\n", r.Quarantined, r.From)
	}
	fmt.Fprintln(w, "verified: the destination, opened anew, reads back every role, artifact (history and counters) and knowledge document as copied")
}
