package forge

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/provider"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/repair"
	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/selector"
)

// roleRuntime is what the call path needs of a role, derived once per stored contract.
type roleRuntime struct {
	rec         *registry.RoleRecord
	caps        sandbox.Capabilities
	limits      sandbox.Limits
	backend     string
	deliverable *jsonschema.Schema
	budget      repair.Budget
	contract    string // canonical JSON, for prompts
}

func newRoleRuntime(rec *registry.RoleRecord, defaultBudget repair.Budget, def Placement) (*roleRuntime, error) {
	c := rec.Contract
	rt := &roleRuntime{rec: rec, backend: c.Sandbox, budget: defaultBudget}
	if caps := c.Capabilities; caps != nil {
		rt.caps = sandbox.Capabilities{Log: caps.Log, Now: caps.Now, Rand: caps.Rand, Call: caps.Call}
		if h := caps.HTTP; h != nil {
			rt.caps.HTTP = &sandbox.HTTPCap{Allow: h.Allow, MaxBytes: h.MaxBytes, Private: h.Private}
			if h.Timeout != "" {
				d, err := time.ParseDuration(h.Timeout)
				if err != nil {
					return nil, fmt.Errorf("role %s: capabilities.http.timeout: %w", c.Role, err)
				}
				rt.caps.HTTP.Timeout = d
			}
		}
	}
	if l := c.Limits; l != nil {
		rt.limits.MaxDepth, rt.limits.MaxCallDepth, rt.limits.Isolation = l.MaxDepth, l.MaxCallDepth, l.Isolation
		if l.Instance == sandbox.InstancePerCall {
			rt.limits.Instance = sandbox.InstancePerCall
		}
		var err error
		if l.Timeout != "" {
			if rt.limits.Timeout, err = time.ParseDuration(l.Timeout); err != nil {
				return nil, fmt.Errorf("role %s: limits.timeout: %w", c.Role, err)
			}
		}
		if l.Memory != "" {
			if rt.limits.MemoryBytes, err = registry.ParseSize(l.Memory); err != nil {
				return nil, fmt.Errorf("role %s: limits.memory: %w", c.Role, err)
			}
		}
		if l.Output != "" {
			n, err := registry.ParseSize(l.Output)
			if err != nil {
				return nil, fmt.Errorf("role %s: limits.output: %w", c.Role, err)
			}
			rt.limits.OutputBytes = int(n)
		}
	}
	if rec.AgentDefined { // stored before DefineRole refused these (agentReachProblems)
		if rt.caps.HTTP != nil {
			rt.caps.HTTP.Private = false
		}
		if !agentMayRunIn(&c) {
			rt.backend = ""
		}
	}
	if rt.backend == "" {
		rt.backend = def.Backend
		if rt.limits.Isolation == "" {
			rt.limits.Isolation = def.Isolation
		}
	}
	rt.limits = rt.limits.WithDefaults()
	if len(c.Deliverable) > 0 {
		s, err := registry.CompileDeliverable(c.Deliverable)
		if err != nil {
			return nil, fmt.Errorf("role %s: deliverable: %w", c.Role, err)
		}
		rt.deliverable = s
	}
	if fp := c.FailurePolicy; fp != nil && fp.MaxRepairsBeforeRegen > 0 {
		b, err := repair.NewBudget(fp.MaxRepairsBeforeRegen)
		if err != nil {
			return nil, err
		}
		rt.budget = b
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	canon, err := registry.CanonicalJSON(raw)
	if err != nil {
		return nil, err
	}
	rt.contract = string(canon)
	return rt, nil
}

// declared returns the declared Go signature of method, or "".
func (rt *roleRuntime) declared(method string) string { return rt.rec.Methods[method] }

// failure is a classified failure of one step of a call.
type failure struct {
	typ    string
	result classifier.Result
	msg    string
	args   json.RawMessage // the call args the code failed on, when a run with them failed
	input  string          // the args' tag (inputTag) when the failure counts toward health (health.go)
	// retryAfter is Error.RetryAfter.
	retryAfter time.Duration
}

func (f *failure) toError() *Error {
	return &Error{Type: f.typ, Class: string(f.result.Class), Rule: string(f.result.Rule), Message: f.msg, Retriable: f.result.Retriable(), RetryAfter: f.retryAfter}
}

// argsHint is the next step of an args error that says none: the backends' decoders said only
// what Go's encoding/json did ("param s: want string: json: cannot unmarshal number into Go value
// of type string"), which an agent over HTTP could not act on.
const argsHint = "give each parameter a JSON value of its Go type, as the method's signature says (in its tool listing: MCP tools/list, GET /v1/tools)"

// classifyErr turns an error of the sandbox, the provider or the forge into a classified failure.
func classifyErr(err error, stale bool) *failure {
	if err == nil {
		return nil
	}
	var se *sandbox.Error
	if errors.As(err, &se) {
		if se.Kind == sandbox.KindArgs && se.Hint == "" {
			c := *se
			c.Hint = argsHint
			se = &c
		}
		f := classifier.Failure{Kind: classifier.Kind(se.Kind), HostCallInFlight: se.HostCallInFlight,
			HTTPStatus: se.HTTPStatus, UpstreamRead: se.UpstreamRead, StaleContract: stale, Network: networkOf(se)}
		return &failure{typ: string(se.Kind), result: classifier.Classify(f), msg: se.Error()}
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		f := classifier.Failure{Kind: classifier.KindProvider, ProviderError: providerErrorOf(pe.Kind)}
		return &failure{typ: TypeProvider, result: classifier.Classify(f), msg: pe.Error()}
	}
	var df *deliverableError
	if errors.As(err, &df) {
		f := classifier.Failure{Kind: classifier.KindDeliverable, UpstreamRead: df.upstream, StaleContract: stale}
		return &failure{typ: TypeDeliverable, result: classifier.Classify(f), msg: df.Error()}
	}
	return &failure{typ: TypeInternal, result: classifier.Classify(classifier.Failure{Kind: classifier.KindInternal}), msg: err.Error()}
}

func providerErrorOf(k provider.ErrorKind) classifier.ProviderError {
	switch k {
	case provider.Unavailable:
		return classifier.ProviderUnavailable
	case provider.RateLimited:
		return classifier.ProviderRateLimited
	case provider.BadAnswer:
		return classifier.ProviderBadAnswer
	case provider.Auth:
		return classifier.ProviderAuth
	case provider.Misconfigured:
		return classifier.ProviderConfig
	}
	return classifier.ProviderError(k)
}

// networkOf reads the network error kind of a host failure: from an error that names it, from
// the Go error chain (errno, DNS, TLS, timeout), or — when the error crossed a process boundary
// as text (isolation workers) — from the message.
func networkOf(se *sandbox.Error) classifier.Network {
	if se.Kind != sandbox.KindHost {
		return ""
	}
	var ne interface{ NetworkKind() string }
	if errors.As(se, &ne) {
		return classifier.Network(ne.NetworkKind())
	}
	var dns *net.DNSError
	var rh tls.RecordHeaderError
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var nerr net.Error
	switch {
	case errors.Is(se, syscall.ECONNREFUSED):
		return classifier.NetRefused
	case errors.Is(se, syscall.ECONNRESET), errors.Is(se, syscall.EPIPE), errors.Is(se, io.ErrUnexpectedEOF):
		return classifier.NetReset
	case errors.As(se, &dns):
		return classifier.NetDNS
	case errors.As(se, &rh), errors.As(se, &cv), errors.As(se, &ua), errors.As(se, &hn), errors.As(se, &ci):
		return classifier.NetTLS
	case errors.Is(se, context.DeadlineExceeded), errors.As(se, &nerr) && nerr.Timeout():
		return classifier.NetTimeout
	}
	if se.HTTPStatus != 0 {
		return ""
	}
	m := se.Message
	switch {
	case strings.Contains(m, "connection refused"):
		return classifier.NetRefused
	case strings.Contains(m, "connection reset"), strings.Contains(m, "broken pipe"):
		return classifier.NetReset
	case strings.Contains(m, "no such host"), strings.Contains(m, "server misbehaving"):
		return classifier.NetDNS
	case strings.Contains(m, "tls: "), strings.Contains(m, "x509: "):
		return classifier.NetTLS
	case strings.Contains(m, "i/o timeout"), strings.Contains(m, "Client.Timeout exceeded"), strings.Contains(m, "context deadline exceeded"):
		return classifier.NetTimeout
	}
	return ""
}

// deliverableError is a result that violates the role's deliverable schema.
type deliverableError struct {
	upstream bool
	err      error
}

func (e *deliverableError) Error() string {
	return "result violates the role's deliverable schema: " + e.err.Error()
}

func checkDeliverable(s *jsonschema.Schema, out sandbox.Output) error {
	if s == nil {
		return nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out.Value))
	if err == nil {
		err = s.Validate(v)
	}
	if err != nil {
		return &deliverableError{upstream: out.UpstreamRead, err: err}
	}
	return nil
}

// selectorArtifact is the selector's plain-data view of a stored artifact.
func selectorArtifact(a *registry.Artifact) selector.Artifact {
	var h selector.Health
	for i := 0; i < len(a.Recent); i++ {
		switch a.Recent[i] {
		case 's':
			h.Successes++
		case 'i':
			h.IntrinsicFailures++
		case 'a':
			h.AdaptiveFailures++
		case 'e':
			h.ExtrinsicFailures++
		}
	}
	return selector.Artifact{
		SchemaVersion:       a.SchemaVersion,
		RuntimeVersion:      a.RuntimeVersion,
		Lifecycle:           selector.Lifecycle(a.Lifecycle),
		ForcedRegeneration:  a.ForceRegenerate,
		ContractFingerprint: a.ContractFingerprint,
		PromptVersion:       a.PromptVersion,
		Health:              h,
	}
}
