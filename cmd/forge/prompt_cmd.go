package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func init() { register(newPromptCmd) }

// newPromptCmd is `forge prompt ROLE METHOD [--repair]`: the assembled prompt the next generation
// (or repair) would send, with each part's tokens and fidelity. Nothing is sent.
func newPromptCmd(a *app) *cobra.Command {
	var repairIt, partsOnly bool
	cmd := &cobra.Command{
		Use:   "prompt ROLE METHOD",
		Short: "Show the prompt the next generation (--repair: repair) of ROLE.METHOD would send, part by part",
		Long: `forge prompt shows what the model would see: the stable system part, then the task, contract,
signature, known tools, recalled lessons and failure sections, each with its estimated tokens and
fidelity (full, summary, index, archive) under the model's ceiling (FORGE_CONTEXT_TOKENS, else the
provider's default). Nothing is sent to the provider and nothing is learned.`,
		Args: nameArgs(2, 2, "role", "method"),
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := a.openForge()
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			p, err := f.PromptPreview(args[0], args[1], repairIt)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"ok": true, "prompt": p})
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "PART\tTOKENS\tFIDELITY\tSTABLE")
			for _, pr := range p.Parts {
				stable := ""
				if pr.Stable {
					stable = "yes"
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", pr.Name, pr.Tokens, pr.Fidelity, stable)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			mode := ""
			if p.Panic {
				mode = " (minimal prompt: the rest did not fit)"
			}
			fmt.Fprintf(a.stdout, "total %d of %d tokens%s\n", p.Tokens, p.Ceiling, mode)
			if partsOnly {
				return nil
			}
			fmt.Fprintf(a.stdout, "\n=== SYSTEM ===\n%s\n=== PROMPT ===\n%s", strings.TrimRight(p.System, "\n"), p.User)
			return nil
		},
	}
	cmd.Flags().BoolVar(&repairIt, "repair", false, "the repair prompt of the persisted code, with its last failure")
	cmd.Flags().BoolVar(&partsOnly, "parts", false, "only the table of parts")
	return cmd
}
