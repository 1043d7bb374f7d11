package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

func init() { register(newEditCmd) }

func newEditCmd(a *app) *cobra.Command {
	var opts forge.EditOptions
	cmd := &cobra.Command{
		Use:   "edit ROLE METHOD",
		Short: "Edit a method's code in $EDITOR; the saved code goes through the gate and becomes a new generation",
		Long: `Edit opens the current code of ROLE.METHOD in $EDITOR (else $VISUAL, else vi). When the editor
exits, the saved code goes through the same gate as generated code (policy, compile, signature,
acceptance examples and tests) and becomes a new generation with trigger operator:edit, or is
refused with the gate's feedback (the edited file is kept so that you can fix it and run
` + "`forge edit`" + ` again). Running forge processes pick the new generation up through watch mode.

The new generation is a candidate, like any new code: a blessed or durable artifact loses that
status (forge edit says so before the editor opens). --keep-lifecycle keeps a blessed, durable or
candidate artifact's lifecycle for the edited code; a quarantined, degraded or archived one's
edited code is a candidate either way.`,
		Args: nameArgs(2, 2, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			role, method := args[0], args[1]
			f, err := a.openForge()
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			art, err := f.Store().Load(role, method)
			if err != nil {
				return err
			}
			next := forge.EditLifecycle(art.Lifecycle, opts)
			// Said before anything is written (on stderr: stdout stays the result, --json's
			// document included), so that an operator can stop before losing a blessing.
			switch {
			case next != art.Lifecycle && (art.Lifecycle == registry.Blessed || art.Lifecycle == registry.Durable):
				fmt.Fprintf(a.stderr, "forge: %s.%s gen %d is %s: the edited code will be generation %d, a %s (no longer %s); quit the editor without saving to keep it, or use --keep-lifecycle\n",
					role, method, art.Generation, art.Lifecycle, art.Generation+1, next, art.Lifecycle)
			default:
				fmt.Fprintf(a.stderr, "forge: %s.%s gen %d is %s: the edited code will be generation %d, %s\n", role, method, art.Generation, art.Lifecycle, art.Generation+1, next)
			}
			dir, err := os.MkdirTemp("", "forge-edit-")
			if err != nil {
				return err
			}
			path := filepath.Join(dir, role+"."+method+".go")
			if err := os.WriteFile(path, []byte(art.Code), 0o600); err != nil {
				return err
			}
			if err := runEditor(a, path); err != nil {
				return err
			}
			code, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("edit: read %s: %w", path, err)
			}
			if string(code) == art.Code || strings.TrimSpace(string(code)) == "" {
				os.RemoveAll(dir)
				if !a.jsonOut {
					fmt.Fprintf(a.stdout, "%s.%s unchanged: nothing stored\n", role, method)
				}
				return nil
			}
			o := f.EditWith(operatorCtx(context.Background()), role, method, string(code), opts)
			if a.jsonOut {
				if err := a.printJSON(o); err != nil {
					return err
				}
			}
			if !o.OK {
				return codedError{exitFailed, fmt.Errorf("edit refused, nothing stored: %s; your code is kept in %s: fix it and run `forge edit` again, or paste it in", o.Err.Message, path)}
			}
			os.RemoveAll(dir)
			if !a.jsonOut {
				now := next
				if cur, err := f.Store().Load(role, method); err == nil {
					now = cur.Lifecycle
				}
				fmt.Fprintf(a.stdout, "%s.%s generation %d stored (operator:edit): %s -> %s\n", role, method, o.Meta.ArtifactGen, art.Lifecycle, now)
				printReplay(a, o.Meta.Replay)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&opts.AcceptChanges, "accept-changes", false, "store the code even if it changes answers of the sample of real calls (shown when refused)")
	cmd.Flags().BoolVar(&opts.KeepLifecycle, "keep-lifecycle", false, "keep a blessed, durable or candidate artifact's lifecycle for the edited code (default: it becomes a candidate)")
	return cmd
}

// runEditor runs $EDITOR (or $VISUAL, or vi) on path, attached to the terminal.
func runEditor(a *app, path string) error {
	ed := os.Getenv("EDITOR")
	if ed == "" {
		ed = os.Getenv("VISUAL")
	}
	if ed == "" {
		if !stdinIsTerminal() {
			// vi on a pipe cannot be used and leaves control sequences on the output.
			return errors.New("edit: neither $EDITOR nor $VISUAL is set and stdin is not a terminal, so vi cannot run: run forge edit from a terminal, or set EDITOR to a program that edits the file named by its last argument; nothing stored")
		}
		ed = "vi"
	}
	parts := strings.Fields(ed)
	cmd := exec.Command(parts[0], append(parts[1:], path)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, a.stderr, a.stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("edit: the editor %q exited with %v: nothing stored (set $EDITOR to the editor you use)", ed, ee)
		}
		return fmt.Errorf("edit: run the editor %q: %w (set $EDITOR)", ed, err)
	}
	return nil
}

// stdinIsTerminal reports whether stdin is a terminal (a variable so that tests can pretend).
var stdinIsTerminal = func() bool { return term.IsTerminal(int(os.Stdin.Fd())) }
