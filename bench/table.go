package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteTable prints the report as the human table of `forge bench`.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	c := r.Config
	row := func(what, value string) { fmt.Fprintf(tw, "%s\t%s\n", what, value) }
	load := fmt.Sprintf("%d calls", c.Calls)
	if c.Duration > 0 {
		load = "for " + c.Duration.String()
	}
	if c.ProcessOnly {
		load = fmt.Sprintf("%d forge call processes", c.ProcessRuns)
	}
	row("run", fmt.Sprintf("%d methods in %d roles on %s; %d goroutine(s), %s, %s (%s/%s, GOMAXPROCS %d)",
		c.Methods, c.Roles, r.Placement, c.Concurrency, c.Pattern, load, r.Host.GOOS, r.Host.GOARCH, r.Host.GOMAXPROCS))
	s := r.Store
	row("store write cost", fmt.Sprintf("%d roles + %d artifacts in %.2f s: %.0f writes/s, p50 %s, p99 %s; %s on disk",
		s.Roles, s.Artifacts, s.Seconds, s.WritesPerSec, dur(s.WriteP50), dur(s.WriteP99), size(s.Bytes)))
	phase := func(name string, l Latency) {
		if l.Calls == 0 {
			row(name, "not run")
			return
		}
		v := fmt.Sprintf("%d calls (%s): p50 %s, p99 %s, max %s; %.0f calls/s", l.Calls, plural(l.Distinct, "method"), dur(l.P50), dur(l.P99), dur(l.Max), l.CallsPerSec)
		if l.Failures > 0 || l.WrongAnswers > 0 {
			v += fmt.Sprintf("; %d FAILED, %d wrong (first: %s)", l.Failures, l.WrongAnswers, l.FirstError)
		}
		row(name, v)
	}
	if s.CacheBytes > 0 && r.Cold.Calls > 0 {
		row("cache/ after the cold phase", fmt.Sprintf("%s: %s per compiled method (wasm modules and compiled code)", size(s.CacheBytes), size(s.CacheBytes/r.Cold.Calls)))
	}
	if c.ProcessOnly {
		row("in-process phases", "skipped (--process-only)")
	} else {
		phase("cold (first call: compile)", r.Cold)
		if r.Baseline != nil {
			phase(fmt.Sprintf("baseline (each method alone, %d in a row)", c.BaselineRun), *r.Baseline)
		}
		phase("warm ("+c.Pattern+")", r.Warm)
	}
	if r.WarmVsBaseline > 0 {
		row("warm p50 / baseline p50", fmt.Sprintf("%.2f x", r.WarmVsBaseline))
	}
	m := r.Memory
	if m.Source != "" {
		row("RSS", fmt.Sprintf("%s now, %s peak (VmHWM), %s before the first call; %s per live artifact", size(m.RSS), size(m.HWM), size(m.RSSBefore), size(m.RSSPerArtifact)))
		if m.Source != sourceProc {
			row("", "RSS source: "+m.Source)
		}
		if m.Children > 0 {
			row("worker processes", fmt.Sprintf("%d, %s RSS together", m.Children, size(m.ChildrenRSS)))
		}
		row("Go heap in use (after GC)", fmt.Sprintf("%s (%s before the first call): %s per live artifact", size(m.HeapInuse), size(m.HeapBefore), size(m.HeapPerArtifact)))
		row("goroutines", fmt.Sprintf("%d (%d before the first call)", m.Goroutines, m.GoroutinesB4))
		row("live programs", fmt.Sprintf("%d", m.LivePrograms))
	}
	if e := r.Events; e.BytesAfter > 0 || e.Dropped > 0 {
		row("event log", fmt.Sprintf("%.0f bytes per warm call; %d dropped", e.BytesPerCall, e.Dropped))
	}
	if r.ForgeFlush > 0 {
		row("forge flush after warm", dur(r.ForgeFlush))
	}
	for _, f := range r.Flush {
		row(fmt.Sprintf("metrics flush, %d touched", f.Touched), fmt.Sprintf("%s (%d merged)", dur(f.Time), f.Merged))
	}
	if p := r.Process; p != nil {
		v := fmt.Sprintf("p50 %s (max %s) vs `forge --version` %s, `forge version` %s: %.2f x process start",
			dur(p.CallP50), dur(p.CallMax), dur(p.VersionFlagP), dur(p.VersionP50), p.Ratio)
		if p.Failures > 0 {
			v += fmt.Sprintf("; %d FAILED (first: %s)", p.Failures, p.FirstError)
		}
		row(fmt.Sprintf("`forge call` as a process (%d runs)", p.Runs), v)
		row("`forge ls --json` as a process", "p50 "+dur(p.LsP50))
		if p.Compacted > 0 {
			row("before the process runs", fmt.Sprintf("%d journal records compacted (a store at rest)", p.Compacted))
		}
	}
	if g := r.Regen; g != nil {
		v := fmt.Sprintf("RSS %s -> %s (%+.1f%%, free memory returned to the OS before each reading), Go heap %s -> %s; each took p50 %s", size(g.RSSBefore), size(g.RSSAfter), 100*g.Growth, size(g.HeapBefore), size(g.HeapAfter), dur(g.EditP50))
		if g.ChildrenRSS0 > 0 || g.ChildrenRSS1 > 0 {
			v += fmt.Sprintf("; workers %s -> %s", size(g.ChildrenRSS0), size(g.ChildrenRSS1))
		}
		if g.Failures > 0 {
			v += fmt.Sprintf("; %d FAILED (first: %s)", g.Failures, g.FirstError)
		}
		row(fmt.Sprintf("%d replacements of one method", g.Count), v)
	}
	if s.Kept {
		row("store kept at", s.Dir)
	}
	if r.Aborted != "" {
		row("STOPPED EARLY", r.Aborted)
	}
	return tw.Flush()
}

// dur renders a latency with 3 significant digits.
func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < time.Microsecond:
		return fmt.Sprintf("%d ns", d)
	case d < time.Millisecond:
		return fmt.Sprintf("%.3g µs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.3g ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3g s", d.Seconds())
}

// size renders bytes in binary units.
func size(b int64) string {
	neg := ""
	if b < 0 {
		neg, b = "-", -b
	}
	switch {
	case b < 1<<10:
		return fmt.Sprintf("%s%d B", neg, b)
	case b < 1<<20:
		return fmt.Sprintf("%s%.1f KiB", neg, float64(b)/(1<<10))
	case b < 1<<30:
		return fmt.Sprintf("%s%.1f MiB", neg, float64(b)/(1<<20))
	}
	return fmt.Sprintf("%s%.2f GiB", neg, float64(b)/(1<<30))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
