package forge

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/artifactforge/forge/registry"
)

// OpDefineRole is the Action of a role definition's event line (Forge.DefineRole): who defined
// which role, new or changed, and the fingerprint before and after (Detail).
const OpDefineRole = "define_role"

// ErrDefineRefused is returned when policy refuses a role definition (DefinePolicy).
var ErrDefineRefused = errors.New("defining roles refused")

// DefinePolicy is what an edge knows of whether the client asking may define roles. Defining is
// off unless the server allows it (`--allow-define-roles`, FORGE_ALLOW_DEFINE_ROLES=1); where
// client identities are configured, only for clients whose identity says so (define_roles).
type DefinePolicy struct {
	// Allowed: the server allows defining roles (for this client, when Identities).
	Allowed bool
	// Identities: client identities are configured; the refusal then names the client's
	// define_roles rather than the server's flag.
	Identities bool
	// Redefine lets the client change a role another client defined (`--allow-redefine-roles`,
	// FORGE_ALLOW_DEFINE_ROLES=all, redefine_roles in the client's identity). A client may always
	// change a role it defined itself, and put the same contract again.
	Redefine bool
}

// DefineResult is what a role definition (or its dry run) did.
type DefineResult struct {
	OK       bool               `json:"ok"`
	Role     string             `json:"role"`
	DryRun   bool               `json:"dry_run,omitempty"`
	Problems []registry.Problem `json:"problems"`
	// Change is "new", "changed" or "unchanged" (the contract's fingerprint against the stored one).
	Change      string `json:"change,omitempty"`
	Fingerprint string `json:"contract_fingerprint,omitempty"`
	DefinedBy   string `json:"defined_by,omitempty"`
	// Tools are the role's methods as tools (role__method), callable at once.
	Tools []string `json:"tools"`
	// Stale are the role's artifacts verified against the contract this one replaced (their next
	// call repairs them).
	Stale []StaleArtifact `json:"stale_artifacts,omitempty"`
}

// DefineRole checks a contract as a client wrote it (JSON, the contract file's schema; an agent's
// declares its methods, and its text for other agents is bounded: agentTextProblems) and, unless
// dryRun, stores it as the client ctx names (WithClient) under policy: the one role definition of
// every edge (MCP forge_define_role, POST /v1/roles, Forge.AddRole, `forge role add`'s check).
// A contract with problems is refused with every problem named (registry.Refusal; nothing is
// written); a definition policy refuses returns ErrDefineRefused saying how to allow it. Every
// definition, done or refused by policy, is an event line (OpDefineRole) with the client's name.
// The new role's methods are callable at once.
func (f *Forge) DefineRole(ctx context.Context, contract []byte, policy DefinePolicy, dryRun bool) (DefineResult, error) {
	c, ps := f.CheckContract(contract)
	if !slices.ContainsFunc(ps, func(p registry.Problem) bool { return p.Field == "" }) { // the JSON read
		ps = append(ps, agentTextProblems(&c)...)
		ps = append(ps, agentReachProblems(&c, clientRoles(ctx))...)
	}
	res := DefineResult{Role: c.Role, DryRun: dryRun, Problems: ps, Tools: toolNames(&c)}
	if res.Problems == nil {
		res.Problems = []registry.Problem{}
	}
	if len(ps) > 0 {
		return res, registry.Refusal(c.Role, ps)
	}
	res.Fingerprint = c.Fingerprint()
	prev, err := f.store.Role(c.Role)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		prev = nil
	case err != nil:
		return res, err
	}
	res.Change = changeOf(prev, &c, res.Fingerprint)
	who := f.who(ctx)
	if dryRun {
		res.OK = true
		return res, nil
	}
	start := time.Now()
	e := f.opEvent(ctx, OpDefineRole, c.Role, "", res.Change+" "+res.Fingerprint)
	e.ContractFingerprint = res.Fingerprint
	if err := defineDecision(policy, who, clientRoles(ctx), c.Role, prev, res.Change); err != nil {
		f.emitOp(e, start, err)
		return res, err
	}
	rec, stale, err := f.storeContract(c.ByAgent(who), e)
	f.emitOp(e, start, err)
	if err != nil {
		return res, err
	}
	res.OK, res.DefinedBy, res.Stale = true, rec.DefinedBy, stale
	return res, nil
}

// storeContract stores c (By or ByAgent says whose) and lists the artifacts its change made
// stale; e is the definition's event line, told the fingerprint it replaced.
func (f *Forge) storeContract(c registry.Contract, e *Event) (registry.RoleRecord, []StaleArtifact, error) {
	rec, old, err := f.store.PutRoleReport(c, f.now())
	if err != nil || old == nil || old.Fingerprint == rec.Fingerprint {
		return rec, nil, err
	}
	e.Detail += " (was " + old.Fingerprint + ")"
	stale, err := StaleByContract(f.store, c.Role)
	return rec, stale, err
}

// PutContract stores contract c as the operator's (`forge role add`): checked as `forge role
// check` does (a refusal names every problem; nothing is written), under no definition policy
// (the operator is trusted), recorded as defined by the client ctx names (WithClient; the CLI's
// cli:USER), with the event line of every definition (OpDefineRole). It returns the stored
// record and the artifacts the change made stale (their next call repairs them).
func (f *Forge) PutContract(ctx context.Context, c registry.Contract) (registry.RoleRecord, []StaleArtifact, error) {
	if err := registry.Refusal(c.Role, c.Check(f.opts.Maxima)); err != nil {
		return registry.RoleRecord{}, nil, err
	}
	start := time.Now()
	fp := c.Fingerprint()
	prev, err := f.store.Role(c.Role)
	if err != nil && !errors.Is(err, registry.ErrNotFound) {
		return registry.RoleRecord{}, nil, err
	}
	e := f.opEvent(ctx, OpDefineRole, c.Role, "", changeOf(prev, &c, fp)+" "+fp)
	e.ContractFingerprint = fp
	rec, stale, err := f.storeContract(c.By(f.who(ctx)), e)
	f.emitOp(e, start, err)
	return rec, stale, err
}

// changeOf is "new", "changed" or "unchanged": contract c of fingerprint fp against prev (its
// docs too: they change what agents are told).
func changeOf(prev *registry.RoleRecord, c *registry.Contract, fp string) string {
	switch {
	case prev == nil:
		return "new"
	case prev.Fingerprint == fp && reflect.DeepEqual(prev.Docs, c.Docs):
		return "unchanged"
	}
	return "changed"
}

// defineDecision is whether client, which may call roles (nil or "*": every role), may make
// change ("new", "changed", "unchanged") to role (prev: its record, nil when new) under policy p;
// the refusal says how to allow it.
func defineDecision(p DefinePolicy, client string, roles []string, role string, prev *registry.RoleRecord, change string) error {
	if !p.Allowed {
		if p.Identities {
			return fmt.Errorf("%w: client %q may not define roles: the operator allows it with define_roles: true for the client in the clients file (and the server's --allow-define-roles or FORGE_ALLOW_DEFINE_ROLES=1)", ErrDefineRefused, client)
		}
		return fmt.Errorf("%w: this server does not let its clients define roles: the operator allows it with --allow-define-roles on `forge mcp` or `forge serve` (or FORGE_ALLOW_DEFINE_ROLES=1), or adds the role with `forge role add -f contract.json`", ErrDefineRefused)
	}
	if roles != nil && !slices.Contains(roles, "*") && !slices.Contains(roles, role) {
		// A role it cannot call would serve only other clients: a name another client lists and
		// the operator has not added yet would be called as this client wrote it.
		return fmt.Errorf("%w: client %q may define only the roles it may call (%s), and not %s: ask the operator to add the role to the client in the clients file", ErrDefineRefused, client, strings.Join(roles, ", "), role)
	}
	if change != "changed" || p.Redefine || prev.DefinedBy == client {
		return nil
	}
	by := "the operator"
	if prev.DefinedBy != "" {
		by = fmt.Sprintf("client %q", prev.DefinedBy)
	}
	return fmt.Errorf("%w: role %s was defined by %s, and changing it would change the methods others call: define a role of another name, or ask the operator to allow redefinitions (--allow-redefine-roles, FORGE_ALLOW_DEFINE_ROLES=all, or redefine_roles: true for the client)", ErrDefineRefused, prev.Role, by)
}

// toolNames are the tools of c's declared methods.
func toolNames(c *registry.Contract) []string {
	out := []string{}
	if registry.ValidateName("role", c.Role) != nil {
		return out // no tool can have the name: a refusal listed "../etc__a" as if it could
	}
	for _, m := range slices.Sorted(maps.Keys(c.Methods)) {
		if registry.ValidateName("method", m) == nil {
			out = append(out, ToolName(c.Role, m))
		}
	}
	return out
}

// DefineSwitches are a server's switches for role definitions: Allow (`--allow-define-roles`,
// FORGE_ALLOW_DEFINE_ROLES=1) turns them on, Redefine (`--allow-redefine-roles`,
// FORGE_ALLOW_DEFINE_ROLES=all) lets clients change roles others defined.
type DefineSwitches struct {
	Allow    bool
	Redefine bool
}

// DefineSwitchesFromEnv reads FORGE_ALLOW_DEFINE_ROLES: 1 or true (define), all (and redefine),
// empty, 0 or false (off).
func DefineSwitchesFromEnv(getenv func(string) string) (DefineSwitches, error) {
	switch v := getenv("FORGE_ALLOW_DEFINE_ROLES"); v {
	case "", "0", "false":
		return DefineSwitches{}, nil
	case "1", "true":
		return DefineSwitches{Allow: true}, nil
	case "all":
		return DefineSwitches{Allow: true, Redefine: true}, nil
	default:
		return DefineSwitches{}, fmt.Errorf("FORGE_ALLOW_DEFINE_ROLES=%q: use 1 (clients may define roles and change their own), all (and change any role) or 0", v)
	}
}

// For is the policy of one client: the server's switches where no client identities are
// configured (identity nil: every client of the server alike); else the client's identity too
// must allow defining (and, for redefining others' roles, redefining).
func (s DefineSwitches) For(identity *DefineSwitches) DefinePolicy {
	if identity == nil {
		return DefinePolicy{Allowed: s.Allow, Redefine: s.Allow && s.Redefine}
	}
	allowed := s.Allow && identity.Allow
	return DefinePolicy{Identities: true, Allowed: allowed, Redefine: allowed && (s.Redefine || identity.Redefine)}
}
