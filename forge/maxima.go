package forge

import (
	"fmt"
	"strings"
	"time"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// CheckContract reads a contract as a user wrote it and returns it with every problem that
// AddRole would refuse it for (registry.CheckContract under this forge's maxima), writing
// nothing: the one check behind `forge role check` and `role add --dry-run`, for every edge.
func (f *Forge) CheckContract(data []byte) (registry.Contract, []registry.Problem) {
	return registry.CheckContract(data, f.opts.Maxima)
}

// Maxima are the operator's bounds on contract limits this forge applies (Options.Maxima with
// its defaults filled in).
func (f *Forge) Maxima() registry.Maxima { return f.opts.Maxima.WithDefaults() }

// clampLimits bounds limits (defaults filled in) by the operator's maxima: a contract stored
// before the maxima were lowered runs under them, never over.
func clampLimits(l sandbox.Limits, m registry.Maxima) sandbox.Limits {
	m = m.WithDefaults()
	l.Timeout = min(l.Timeout, m.Timeout)
	l.MemoryBytes = min(l.MemoryBytes, m.Memory)
	l.OutputBytes = int(min(int64(l.OutputBytes), m.Output))
	return l
}

// maximaFromEnv reads FORGE_MAX_MEMORY, FORGE_MAX_TIMEOUT and FORGE_MAX_OUTPUT.
func maximaFromEnv(getenv func(string) string) (registry.Maxima, error) {
	var m registry.Maxima
	for _, s := range []struct {
		name string
		dst  *int64
		def  int64
	}{{"FORGE_MAX_MEMORY", &m.Memory, registry.DefaultMaxMemory}, {"FORGE_MAX_OUTPUT", &m.Output, registry.DefaultMaxOutput}} {
		if v := getenv(s.name); v != "" {
			n, err := sandbox.ParseSize(v)
			if err != nil {
				return m, fmt.Errorf("%s=%q: %v (the default is %s)", s.name, v, err, sandbox.FormatSize(s.def))
			}
			*s.dst = n
		}
	}
	if v := getenv("FORGE_MAX_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return m, fmt.Errorf("FORGE_MAX_TIMEOUT=%q: use a positive duration such as 30s or 5m (the default is %s)", v, registry.DefaultMaxTimeout)
		}
		m.Timeout = d
	}
	return m, nil
}
