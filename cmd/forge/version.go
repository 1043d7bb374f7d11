package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

// versionInfo is what `forge version` reports, from the binary's build information.
type versionInfo struct {
	Module    string `json:"module"`
	Version   string `json:"version"` // module version: a tag for `go install ...@vX`, (devel) for a local build
	Commit    string `json:"commit,omitempty"`
	Modified  bool   `json:"modified,omitempty"` // built from a work tree with uncommitted changes
	CommitAt  string `json:"commit_time,omitempty"`
	GoVersion string `json:"go_version"`
}

func (v versionInfo) String() string {
	s := v.Version
	if v.Commit != "" {
		c := v.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " (commit " + c
		if v.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + " " + v.GoVersion
}

// buildVersion reads the module version, the VCS commit and the Go version the binary was built
// with. A test binary or a build without module support reports what it has.
func buildVersion() versionInfo {
	v := versionInfo{Module: "github.com/artifactforge/forge", Version: "(unknown)", GoVersion: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.GoVersion = bi.GoVersion
	if bi.Main.Path != "" {
		v.Module = bi.Main.Path
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "vcs.time":
			v.CommitAt = s.Value
		}
	}
	return v
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print forge's module version, commit and Go version",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			v := buildVersion()
			if a.jsonOut {
				return a.printJSON(v)
			}
			fmt.Fprintf(a.stdout, "forge %s\n", strings.TrimSpace(v.String()))
			return nil
		},
	}
}
