package forge

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/sandbox"
)

// Bounds on the text of a contract an agent defined (DefineRole) that other agents' models read
// in tool listings (MCP tools/list, GET /v1/tools, `forge tools`): the role's purpose and each
// method's description, each parameter's description, the examples. DefineRole refuses a contract
// over them, saying which field; a tool of a role stored before is cut to them.
const (
	MaxAgentText      = 1000 // runes: the purpose; a method's description
	MaxAgentParamText = 200  // runes: one parameter's description; one example, as compact JSON
	MaxAgentExamples  = 3    // examples per method
)

// agentTextProblems are the places where the contract c an agent wrote says more than other
// agents' tool listings carry (the bounds above), and that it declares no methods: an agent's
// role names what it will call (see methodRefusal).
func agentTextProblems(c *registry.Contract) []registry.Problem {
	var ps []registry.Problem
	bad := func(field, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		ps = append(ps, registry.Problem{Field: field, Message: msg, Err: fmt.Errorf("%w: role %q: %s", registry.ErrInvalidContract, c.Role, msg)})
	}
	if len(c.Methods) == 0 {
		bad("methods", "a role an agent defines declares the methods it will call (each undeclared name would cost a model call): add them to methods, e.g. \"methods\": {\"word_count\": \"func WordCount(s string) int\"}")
	}
	tooLong := func(field, what, s string, max int) {
		if n := utf8.RuneCountInString(s); n > max {
			bad(field, "%s is %d characters; other agents' models read it in the tool list, so it is at most %d: shorten it", what, n, max)
		}
	}
	tooLong("purpose", "the purpose", c.Purpose, MaxAgentText)
	for _, m := range slices.Sorted(maps.Keys(c.Docs)) {
		d, field := c.Docs[m], "docs."+m
		tooLong(field+".description", "the description of "+m, d.Description, MaxAgentText)
		for _, p := range slices.Sorted(maps.Keys(d.Params)) {
			tooLong(field+".params."+p, "the description of parameter "+p+" of "+m, d.Params[p], MaxAgentParamText)
		}
		if len(d.Examples) > MaxAgentExamples {
			bad(field+".examples", "%s has %d examples; a tool shows at most %d: keep the telling ones", m, len(d.Examples), MaxAgentExamples)
		}
		for i, ex := range d.Examples {
			tooLong(fmt.Sprintf("%s.examples[%d]", field, i), fmt.Sprintf("example %d of %s", i+1, m), exampleText(ex), MaxAgentParamText)
		}
	}
	return ps
}

// agentReachProblems are what the contract c an agent wrote, for a client of roles (clientRoles),
// asks beyond what an agent may decide: where its code runs (only a backend that contains hostile
// code, as the forge's default does, never one the operator must opt into or in-process yaegi),
// private addresses for its HTTP, and delegation for a client of only some roles (its code could
// call every role, the client's or not). The operator's contracts (`forge role add`) may.
func agentReachProblems(c *registry.Contract, roles []string) []registry.Problem {
	var ps []registry.Problem
	bad := func(field, format string, args ...any) {
		msg := fmt.Sprintf(format, args...) + "; the operator can add a role that does (`forge role add`)"
		ps = append(ps, registry.Problem{Field: field, Message: msg, Err: fmt.Errorf("%w: role %q: %s", registry.ErrInvalidContract, c.Role, msg)})
	}
	if !agentMayRunIn(c) {
		bad("sandbox", "sandbox %q does not contain an agent's code as named (leave sandbox out for the server's default, or name one that contains hostile code: %s)", c.Sandbox, containing())
	}
	if caps := c.Capabilities; caps != nil {
		if caps.HTTP != nil && caps.HTTP.Private {
			bad("capabilities.http.private", "an agent's role reaches public hosts only: remove `private`")
		}
		if caps.Call && !slices.Contains(roles, "*") {
			bad("capabilities.call", "an agent's role delegates only for a client of every role (its code could call any role, and this client may call only %s): remove `call`", strings.Join(roles, ", "))
		}
	}
	return ps
}

// agentMayRunIn reports whether an agent's contract c may run where it names: nowhere (the forge's
// default), or a registered backend that contains hostile code as named and is not opt-in.
func agentMayRunIn(c *registry.Contract) bool {
	b, ok := sandbox.LookupBackend(c.Sandbox)
	if c.Sandbox == "" || !ok {
		return true // an unknown one is the contract check's refusal
	}
	isolation := ""
	if c.Limits != nil {
		isolation = c.Limits.Isolation
	}
	return !b.OptIn && (b.Contains || (b.ContainsIsolated != "" && isolation == b.ContainsIsolated))
}

// containing names the registered backends an agent may name (wasm; yaegi with limits.isolation
// "process").
func containing() string {
	var out []string
	for _, b := range sandbox.Backends() {
		switch {
		case b.OptIn:
		case b.Contains:
			out = append(out, b.Name)
		case b.ContainsIsolated != "":
			out = append(out, fmt.Sprintf("%s with limits.isolation %q", b.Name, b.ContainsIsolated))
		}
	}
	return strings.Join(out, ", ")
}

// exampleText is a docs example as a tool shows it: args, and the result when given.
func exampleText(ex registry.DocExample) string {
	s := compactJSON(ex.Args)
	if len(ex.Result) > 0 {
		s += " returns " + compactJSON(ex.Result)
	}
	return s
}

// clip cuts s to max runes, the last one an ellipsis.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

// agentMark is what a tool of a role an agent defined starts with: whose text follows.
func agentMark(rec *registry.RoleRecord) string {
	if rec.DefinedBy == "" {
		return "(defined by an agent) "
	}
	return fmt.Sprintf("(defined by agent %q) ", clip(rec.DefinedBy, 64))
}

// methodRefusal says why role rec does not take a call of method ("" when it does); missing
// says the method has no artifact yet, so the call would write one (a model call). A role that
// declares methods takes those only. A role that declares none takes any method name, each new
// one written by its first call, only when the operator defined it: a role an agent defined
// declares its methods (DefineRole), and one stored before that rule runs the methods it has but
// writes no new one.
func methodRefusal(rec *registry.RoleRecord, method string, missing bool) string {
	if len(rec.Methods) > 0 {
		if _, ok := rec.Methods[method]; !ok {
			return fmt.Sprintf("role %s declares no method %s (it declares %s); add it to the contract with `forge role add`", rec.Role, method, methodList(rec.Methods))
		}
		return ""
	}
	if rec.AgentDefined && missing {
		return fmt.Sprintf("role %s was defined by an agent (%s) and declares no methods, so a call may not write method %s (each such name would cost a model call): define the role again with %s in its methods (forge_define_role, POST /v1/roles), or have the operator add the contract with `forge role add`",
			rec.Role, orName(rec.DefinedBy), method, method)
	}
	return ""
}

func orName(s string) string {
	if s == "" {
		return "unnamed"
	}
	return s
}
