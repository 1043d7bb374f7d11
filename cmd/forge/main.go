// Command forge is the command-line face of the forge: thin wrappers that turn flags into calls of
// the forge packages and their results into text or JSON.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/sandbox/yaegi"
)

// Exit codes shared by every command.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	// exitInterrupted is the shell's code for a process ended by SIGINT (128+2): a call or regen
	// interrupted with Ctrl-C.
	exitInterrupted = 130
)

// app carries the global flags and the output streams to every command.
type app struct {
	storeFlag    string
	providerFlag string
	eventsFlag   string // --events: overrides $FORGE_EVENTS
	jsonOut      bool
	verbose      bool
	stdout       io.Writer
	stderr       io.Writer
	// printed is set once a JSON document went to stdout: an error after it adds no second one.
	printed bool
	// client names this process to a networked store's servers: "forge" and the command path
	// ("forge serve", "forge quarantine ls").
	client string
}

// subcommands is filled by init functions in this package's files, one file per command group.
var subcommands []func(*app) *cobra.Command

func register(f func(*app) *cobra.Command) { subcommands = append(subcommands, f) }

// usageError marks an error that is the caller's misuse of the command line (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// storeDir resolves the store (a directory or a backend's URL): --store, else forge.DefaultStore.
func (a *app) storeDir() (string, error) {
	if a.storeFlag != "" {
		return a.storeFlag, nil
	}
	return forge.DefaultStore()
}

// printJSON writes v as indented JSON to stdout.
func (a *app) printJSON(v any) error {
	a.printed = true
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// rootLong is `forge --help`'s opening: what forge is and where a newcomer starts.
const rootLong = `Call methods that do not exist yet: the first call of ROLE.METHOD has a model write the method
as Go code from the role's contract; forge verifies it, runs it in a sandbox and keeps it, and
later calls run the kept code with no model call.

New here? Start with the whole lifecycle, offline, on a temporary store:
  forge demo
Then, from a checkout of the repository (the replay provider answers without a model):
  forge role add -f examples/contracts/text.json
  forge call text upper s=hello --provider replay:cmd/forge/demo/cassette.jsonl
  forge call text upper s=again     # the kept code: no provider needed`

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:           "forge",
		Short:         "Call methods that do not exist yet: generated, verified, sandboxed, persisted Go",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion().String(),
	}
	root.SetVersionTemplate("forge {{.Version}}\n")
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.PersistentFlags().StringVar(&a.storeFlag, "store", "", "store: a directory, or a store URL such as nats://host:4222/forge (default $FORGE_STORE, else $XDG_STATE_HOME/forge, else ~/.local/state/forge; a URL store keeps events and caches in $FORGE_LOCAL_DIR)")
	root.PersistentFlags().StringVar(&a.eventsFlag, "events", "", "event log of the calls this process serves: aggregate (warm successes folded per artifact and second), aggregate:30s (another interval), all (one line per call) or off (default $FORGE_EVENTS, else aggregate)")
	root.PersistentFlags().BoolVar(&a.jsonOut, "json", false, "print machine-readable JSON: one document on stdout, errors included ({\"ok\":false,\"error\":{...}})")
	root.PersistentFlags().BoolVarP(&a.verbose, "verbose", "v", false, "say more on stderr: provider retries, slow steps")
	root.PersistentFlags().StringVar(&a.providerFlag, "provider", "", "code generator: replay:PATH, openai[:MODEL], anthropic[:MODEL] or command:PROG ARGS (default $FORGE_PROVIDER)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		a.client = cmd.CommandPath()
		if ownProcess && listingCommands[a.client] {
			listingGC()
		}
	}
	for _, f := range subcommands {
		root.AddCommand(f(a))
	}
	return root
}

// run executes the command line and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr}
	root := newRootCmd(a)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	// Errors of package forge and of the store already name their source; one prefix is enough.
	msg := strings.TrimPrefix(err.Error(), "forge: ")
	fmt.Fprintln(stderr, "forge:", msg)
	if (a.jsonOut || jsonRequested(args)) && !a.printed {
		kind := "failed"
		if code == exitUsage {
			kind = "usage"
		}
		_ = a.printJSON(jsonError{OK: false, Error: jsonErrorBody{Kind: kind, Message: msg, ExitCode: code}})
	}
	return code
}

func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return exitUsage
	}
	var ce codedError
	if errors.As(err, &ce) {
		return ce.code
	}
	return exitFailed
}

// jsonRequested reports whether --json is on the command line, for errors raised before cobra
// parsed the flags (an unknown flag or command).
func jsonRequested(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// jsonError is the one document --json prints for a command that failed before printing its own.
type jsonError struct {
	OK    bool          `json:"ok"`
	Error jsonErrorBody `json:"error"`
}

type jsonErrorBody struct {
	Kind     string `json:"kind"` // usage | failed
	Message  string `json:"message"`
	ExitCode int    `json:"exit_code"`
}

// codedError lets a command choose its exit code while still printing an error.
type codedError struct {
	code int
	err  error
}

func (e codedError) Error() string { return e.err.Error() }
func (e codedError) Unwrap() error { return e.err }

// ownProcess is set by main: the command line is the process's own (run is also called by tests).
var ownProcess bool

// listingCommands read the store, print and exit; no guest code runs in them.
var listingCommands = map[string]bool{
	"forge ls": true, "forge show": true, "forge history": true, "forge stale": true,
	"forge role ls": true, "forge role show": true, "forge knowledge ls": true, "forge quarantine ls": true,
}

// listingMemLimit is the heap a listing command may reach before the collector runs.
const listingMemLimit = 512 << 20

// listingGC turns the garbage collector off, up to listingMemLimit, for a listing command in a
// process of its own: the runtime's first collections start at a 4 MiB heap, and a listing of
// 10,000 artifacts spent a sixth of its CPU collecting garbage the exit frees anyway (RATIONALE,
// "forge ls as a process"). GOGC or GOMEMLIMIT in the environment take precedence.
func listingGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(listingMemLimit)
	debug.SetGCPercent(-1)
}

func main() {
	// A forge process serves as its own isolation worker (and as the worker of agents that embed
	// forge and find this binary through $FORGE_WORKER or PATH).
	yaegi.MaybeServeWorker()
	if len(os.Args) == 2 && os.Args[1] == warmChildArg {
		os.Exit(warmChild())
	}
	ownProcess = true
	warmInBackground(os.Args[1:], os.Stderr)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
