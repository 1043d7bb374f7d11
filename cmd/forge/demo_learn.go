package main

import (
	"context"
	"strings"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/learner"
	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
)

// The demo's learning step: its "model" for the clock and calendar roles is a rule, not a
// cassette, so that what it answers depends on the prompt: code that calls time.Now (refused by
// the sandbox) unless the prompt carries the lesson "use host.Now".

// demoLessonModel answers the learning step's roles by the rule above and passes the others on.
type demoLessonModel struct{ next provider.Provider }

func (m demoLessonModel) Generate(ctx context.Context, r provider.Request) (provider.Answer, error) {
	fn := map[string]string{"clock": "Year", "calendar": "Day"}[r.Role]
	if fn == "" {
		return m.next.Generate(ctx, r)
	}
	pkg, call := "time", "time.Now()"
	if strings.Contains(r.Prompt, "use host.Now") {
		pkg, call = "forge/host", "host.Now()"
	}
	return provider.Answer{Code: "package artifact\n\nimport \"" + pkg + "\"\n\nfunc " + fn + "() int { return " + call + "." + fn + "() }\n", Model: "demo-rule"}, nil
}

func (demoLessonModel) Name() string { return "demo" }

func (d *demoRun) stepLearn(ctx context.Context) {
	for _, c := range []registry.Contract{
		{Role: "clock", Purpose: "the year of the current time", Methods: map[string]string{"year": "func Year() int"}, Capabilities: &registry.Capabilities{Now: true}},
		{Role: "calendar", Purpose: "the day of the month of the current time", Methods: map[string]string{"day": "func Day() int"}, Capabilities: &registry.Capabilities{Now: true}},
	} {
		if err := d.f.AddRole(c); err != nil {
			d.differ("add role %s: %v", c.Role, err)
			return
		}
	}
	d.printf("   this step's model writes time.Now() unless its prompt carries the lesson \"use host.Now\"\n")
	d.call(ctx, "clock", "year", `{}`, want{ok: true, source: forge.SourceGenerated, gen: 1, calls: 2})
	d.f.Flush() // the reflector: the lesson this process learned goes to knowledge/
	l := d.f.Learner()
	es, err := l.List(learner.ForgeDomain)
	if err != nil || len(es) != 1 {
		d.differ("want one lesson in the forge domain after the fix, got %d (%v)", len(es), err)
		return
	}
	// The lesson is forge's own wording for the refusal (the gate's hint for time.Now), never the
	// failure's text, so it may reach other roles' prompts.
	d.printf("   learned (forge domain, %s, confidence %.1f): %s\n", sourceOf(es[0]), es[0].Confidence, oneLine(es[0].Content, 110))
	d.call(ctx, "calendar", "day", `{}`, want{ok: true, source: forge.SourceGenerated, gen: 1, calls: 1})
	es, _ = l.List(learner.ForgeDomain)
	if len(es) == 1 {
		d.printf("   reused: another role passed at the first attempt; the lesson is confirmed (confidence %.1f)\n", es[0].Confidence)
		if es[0].Confidence < 0.2 {
			d.differ("the lesson was not confirmed: %+v", es[0])
		}
	}
}
