package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/artifactforge/forge/internal/jsonval"
)

// timeProcess runs `forge call` as a whole process runs times on the store (method i of run i,
// spread over the store), each run next to `forge version` and `forge --version` (process start,
// the baseline) and `forge ls --json` (a listing of the whole store), after one untimed run of
// `--version` and `call` (the binary in the page cache).
func timeProcess(ctx context.Context, exe, dir string, ms []method, runs int, progress func(done, total int64)) ProcessCost {
	pc := ProcessCost{Runs: runs}
	var calls, vers, flags, lss []time.Duration
	stride := max(1, len(ms)/max(1, runs))
	run := func(args ...string) (time.Duration, []byte, error) {
		cmd := exec.CommandContext(ctx, exe, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		t0 := time.Now()
		err := cmd.Run()
		d := time.Since(t0)
		if err != nil {
			return d, nil, fmt.Errorf("%s %s: %v: %s", exe, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
		}
		return d, out.Bytes(), nil
	}
	fail := func(err error) {
		pc.Failures++
		if pc.FirstError == "" {
			pc.FirstError = err.Error()
		}
	}
	callArgs := func(m *method) []string {
		return []string{"--store", dir, "--json", "call", m.Role, m.Name, "--args", string(m.Args)}
	}
	// Untimed: the first exec of a binary reads it from disk.
	_, _, _ = run("--version")
	_, _, _ = run(callArgs(&ms[0])...)
	for i := 0; i < runs && ctx.Err() == nil; i++ {
		if d, _, err := run("--version"); err == nil {
			flags = append(flags, d)
		} else {
			fail(err)
		}
		if d, _, err := run("version"); err == nil {
			vers = append(vers, d)
		} else {
			fail(err)
		}
		if d, out, err := run("--store", dir, "--json", "ls"); err == nil && bytes.Contains(out, []byte(ms[0].Name)) {
			lss = append(lss, d)
		} else if err != nil {
			fail(err)
		} else {
			fail(fmt.Errorf("forge ls does not list %s.%s", ms[0].Role, ms[0].Name))
		}
		m := &ms[(i*stride)%len(ms)]
		d, out, err := run(callArgs(m)...)
		if err == nil {
			var o struct {
				OK    bool            `json:"ok"`
				Value json.RawMessage `json:"value"`
			}
			if jerr := json.Unmarshal(out, &o); jerr != nil || !o.OK || !jsonval.Equal(o.Value, m.Want) {
				err = fmt.Errorf("forge call %s %s: want ok with %s, got %s", m.Role, m.Name, m.Want, bytes.TrimSpace(out))
			}
		}
		if err != nil {
			fail(err)
		} else {
			calls = append(calls, d)
		}
		progress(int64(i+1), int64(runs))
	}
	for _, l := range [][]time.Duration{calls, vers, flags, lss} {
		slices.Sort(l)
	}
	pc.CallP50, pc.VersionP50, pc.VersionFlagP, pc.LsP50 = pct(calls, 50), pct(vers, 50), pct(flags, 50), pct(lss, 50)
	if len(calls) > 0 {
		pc.CallMax = calls[len(calls)-1]
	}
	if pc.VersionFlagP > 0 {
		pc.Ratio = float64(pc.CallP50) / float64(pc.VersionFlagP)
	}
	return pc
}
