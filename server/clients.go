package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"go.yaml.in/yaml/v3"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/internal/storepath"
	"github.com/artifactforge/forge/mcp"
)

// Client identities (`forge serve --clients FILE`, or $FORGE_CLIENTS): each client has a bearer
// token, the roles it may call and a rate limit. With clients configured, every request but
// /healthz, /readyz, /metrics and the operator verbs (which keep the admin token) needs a
// client's token: the client's name goes into the request's context (forge.WithClient), so its
// calls run in live programs of its own (no two clients share an interpreter, instance or worker)
// and everything downstream knows who called.

// ClientConfig is one client in the clients file.
type ClientConfig struct {
	// Name identifies the client in events, logs and the live set (letters, digits, ., _, -).
	Name string `yaml:"name" json:"name"`
	// Token is the client's bearer token in clear; TokenSHA256 its SHA-256 in hex instead (so
	// that the file holds no secret). Exactly one of them.
	Token       string `yaml:"token,omitempty" json:"token,omitempty"`
	TokenSHA256 string `yaml:"token_sha256,omitempty" json:"token_sha256,omitempty"`
	// Roles the client may call: a list of role names, or "*" for every role.
	Roles RoleList `yaml:"roles" json:"roles"`
	// Rate is the client's request budget, "N/s", "N/m" or "N/h" (up to N at once, refilled at
	// N per period); empty: no limit.
	Rate string `yaml:"rate,omitempty" json:"rate,omitempty"`
	// DefineRoles lets the client define roles (POST /v1/roles, forge_define_role) when the
	// server allows it (--allow-define-roles); RedefineRoles also lets it change roles other
	// clients defined.
	DefineRoles   bool `yaml:"define_roles,omitempty" json:"define_roles,omitempty"`
	RedefineRoles bool `yaml:"redefine_roles,omitempty" json:"redefine_roles,omitempty"`
	// ModelCalls is the model calls the client's calls may spend, "N/h" (or /m, /s; "off": no
	// bound); empty: the server's --model-calls (forge.ModelCallLimit).
	ModelCalls string `yaml:"model_calls,omitempty" json:"model_calls,omitempty"`
}

// RoleList is a client's roles: names, or All.
type RoleList struct {
	All   bool
	Names []string
}

// UnmarshalYAML reads "*" or a list of role names.
func (r *RoleList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value != "*" {
			return fmt.Errorf("line %d: roles: write \"*\" (every role) or a list of role names, not %q", n.Line, n.Value)
		}
		r.All = true
		return nil
	case yaml.SequenceNode:
		return n.Decode(&r.Names)
	}
	return fmt.Errorf("line %d: roles: write \"*\" (every role) or a list of role names", n.Line)
}

// Client is one configured client.
type Client struct {
	Name   string
	roles  RoleList
	lim    *limiter // nil: no limit
	define forge.DefineSwitches
	// models is the client's own model-call bound (ClientConfig.ModelCalls); set says it has one.
	models    forge.ModelCallBound
	modelsSet bool
}

// MayCall reports whether the client may call role's methods.
func (c *Client) MayCall(role string) bool {
	return c.roles.All || slices.Contains(c.roles.Names, role)
}

// AllRoles reports whether the client may call every role (and read the listings).
func (c *Client) AllRoles() bool { return c.roles.All }

// Clients are the client identities of a server, by token hash.
type Clients struct {
	byHash map[[sha256.Size]byte]*Client
	now    func() time.Time
}

var clientName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// LoadClients reads a clients file (YAML or JSON: a list of ClientConfig), refusing one that is
// not a regular file or that every user may write, it or its directory (it decides who may call
// and what they may spend, as store files decide what forge runs).
func LoadClients(path string) (*Clients, error) {
	data, err := storepath.ReadRegular(path, "read the clients of the server from")
	if err != nil {
		return nil, fmt.Errorf("clients file: %w", err)
	}
	cs, err := ParseClients(data)
	if err != nil {
		return nil, fmt.Errorf("clients file %s: %w", path, err)
	}
	return cs, nil
}

// ParseClients reads the clients of a clients file's content (YAML or JSON).
func ParseClients(data []byte) (*Clients, error) {
	var list []ClientConfig
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("%v (write a list of {name, token or token_sha256, roles, rate})", err)
	}
	return NewClients(list)
}

// AdminClient is the client the admin token calls as; no client of the clients file may take it.
const AdminClient = "admin"

// NewClients checks the configuration and builds the clients.
func NewClients(list []ClientConfig) (*Clients, error) {
	if len(list) == 0 {
		return nil, errors.New("no clients: list at least one {name, token or token_sha256, roles, rate}")
	}
	cs := &Clients{byHash: map[[sha256.Size]byte]*Client{}, now: time.Now}
	names := map[string]bool{}
	for i, c := range list {
		at := fmt.Sprintf("client %d (%q)", i+1, c.Name)
		if !clientName.MatchString(c.Name) {
			return nil, fmt.Errorf("%s: name: use 1 to 64 letters, digits, '.', '_' and '-'", at)
		}
		if c.Name == AdminClient {
			return nil, fmt.Errorf("%s: name: %q is the operator's (the admin token calls as %q): give the client another name", at, AdminClient, AdminClient)
		}
		if names[c.Name] {
			return nil, fmt.Errorf("%s: the name is used twice", at)
		}
		names[c.Name] = true
		var h [sha256.Size]byte
		switch {
		case c.Token != "" && c.TokenSHA256 != "":
			return nil, fmt.Errorf("%s: give token or token_sha256, not both", at)
		case c.Token != "":
			if len(c.Token) < 16 {
				return nil, fmt.Errorf("%s: token: use at least 16 characters (e.g. `openssl rand -hex 32`)", at)
			}
			h = sha256.Sum256([]byte(c.Token))
		case c.TokenSHA256 != "":
			b, err := hex.DecodeString(c.TokenSHA256)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("%s: token_sha256: write the SHA-256 of the token in hex (64 digits: `printf %%s TOKEN | sha256sum`)", at)
			}
			copy(h[:], b)
		default:
			return nil, fmt.Errorf("%s: no token: give token (or token_sha256, its SHA-256 in hex)", at)
		}
		if _, dup := cs.byHash[h]; dup {
			return nil, fmt.Errorf("%s: another client has the same token; give each client its own", at)
		}
		if !c.Roles.All && len(c.Roles.Names) == 0 {
			return nil, fmt.Errorf("%s: roles: list the roles it may call, or \"*\" for every role", at)
		}
		cl := &Client{Name: c.Name, roles: c.Roles, define: forge.DefineSwitches{Allow: c.DefineRoles, Redefine: c.RedefineRoles}}
		if c.Rate != "" {
			n, per, err := ParseRate(c.Rate)
			if err != nil {
				return nil, fmt.Errorf("%s: rate: %v", at, err)
			}
			cl.lim = &limiter{burst: float64(n), perSec: float64(n) / per.Seconds(), tokens: float64(n)}
		}
		if c.ModelCalls != "" {
			b, err := ParseModelCalls(c.ModelCalls)
			if err != nil {
				return nil, fmt.Errorf("%s: model_calls: %v", at, err)
			}
			cl.models, cl.modelsSet = b, true
		}
		cs.byHash[h] = cl
	}
	return cs, nil
}

// ParseModelCalls reads a model-call bound: "N/h" (N/m, N/s, as ParseRate), or "off" (none).
func ParseModelCalls(s string) (forge.ModelCallBound, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "off", "none", "0":
		return forge.ModelCallBound{}, nil
	}
	n, per, err := ParseRate(s)
	if err != nil {
		return forge.ModelCallBound{}, fmt.Errorf("%v, or off for no bound", err)
	}
	return forge.ModelCallBound{N: n, Per: per}, nil
}

// ModelCalls is the forge's model-call limit for these clients: def for every client, and each
// client's own model_calls where its entry sets one. A nil Clients has no named clients.
func (cs *Clients) ModelCalls(def forge.ModelCallBound) forge.ModelCallLimit {
	l := forge.ModelCallLimit{Default: def}
	if cs == nil {
		return l
	}
	for _, c := range cs.byHash {
		if c.modelsSet {
			if l.Clients == nil {
				l.Clients = map[string]forge.ModelCallBound{}
			}
			l.Clients[c.Name] = c.models
		}
	}
	return l
}

// ParseRate reads "N/s", "N/m" or "N/h" (also "N/second", "N/minute", "N/hour").
func ParseRate(s string) (int, time.Duration, error) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if !ok || err != nil || n <= 0 {
		return 0, 0, fmt.Errorf("%q: write N/s, N/m or N/h with N > 0 (e.g. 100/s)", s)
	}
	switch strings.TrimSpace(unit) {
	case "s", "sec", "second":
		return n, time.Second, nil
	case "m", "min", "minute":
		return n, time.Minute, nil
	case "h", "hour":
		return n, time.Hour, nil
	}
	return 0, 0, fmt.Errorf("%q: the period is s, m or h (e.g. 100/s)", s)
}

// Lookup returns the client whose token this is, or nil.
func (cs *Clients) Lookup(token string) *Client {
	if token == "" {
		return nil
	}
	return cs.byHash[sha256.Sum256([]byte(token))]
}

// limiter is a token bucket: up to burst requests at once, refilled at perSec.
type limiter struct {
	mu     sync.Mutex
	burst  float64
	perSec float64
	tokens float64
	last   time.Time
}

// take spends one token, or says how long until one is there.
func (l *limiter) take(now time.Time) (ok bool, retry time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() {
		l.tokens = math.Min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.perSec)
	}
	l.last = now
	if l.tokens >= 1 {
		l.tokens--
		return true, 0
	}
	return false, time.Duration((1 - l.tokens) / l.perSec * float64(time.Second))
}

// bearer is the token of "Authorization: Bearer TOKEN", if any.
func bearer(r *http.Request) string {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return strings.TrimSpace(tok)
}

// roleOf is the role a role-scoped endpoint names ("" for the others), and whether the endpoint
// is a listing over every role. It reads the escaped path segment by segment, as the mux matches
// it, so that an escaped slash cannot make the role it checks differ from the one served.
func roleOf(escapedPath string) (role string, listing bool) {
	parts := strings.Split(strings.Trim(escapedPath, "/"), "/")
	if len(parts) < 2 || parts[0] != "v1" {
		return "", false
	}
	switch parts[1] {
	case "call", "roles", "artifacts", "history":
		if len(parts) >= 3 {
			r, err := url.PathUnescape(parts[2])
			if err != nil || r == "" {
				return "", true // not a role name: only a client of every role gets to the mux's refusal
			}
			return r, false
		}
		return "", true
	case "stale", "stats", "artifact-table", "quarantine":
		return "", true
	}
	return "", false
}

// gate admits a request under the client identities, or answers it (401, 403, 429) and returns
// false. An admitted request's context names its client (forge.WithClient).
func (cs *Clients) gate(w http.ResponseWriter, r *http.Request, adminToken string) (*http.Request, bool) {
	switch p := r.URL.Path; {
	case p == "/healthz" || p == "/readyz" || p == "/metrics" || strings.HasPrefix(p, "/v1/admin/"):
		return r, true // probes and metrics are open; operator verbs keep the admin token
	case p == "/ui" || strings.HasPrefix(p, "/ui/"):
		return r, true // the console's static files hold no data: what it reads sends a token
	}
	tok := bearer(r)
	if adminToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(adminToken)) == 1 {
		// The operator reads everything (and calls as the client "admin").
		return r.WithContext(forge.WithClient(r.Context(), AdminClient)), true
	}
	c := cs.Lookup(tok)
	if c == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="forge"`)
		msg := "this server has client identities: send \"Authorization: Bearer TOKEN\" with your client's token (the operator lists clients in `forge serve --clients FILE`)"
		if tok != "" {
			msg = "the bearer token is no client's: check the token, or ask the operator to add your client to the clients file"
		}
		writeErr(w, http.StatusUnauthorized, "unauthorized", msg)
		return r, false
	}
	if c.lim != nil {
		if ok, retry := c.lim.take(cs.now()); !ok {
			secs := max(1, int(math.Ceil(retry.Seconds())))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeErr(w, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf("client %s is over its rate limit: retry after %d s (or ask the operator for a higher rate)", c.Name, secs))
			return r, false
		}
	}
	role, listing := roleOf(r.URL.EscapedPath())
	switch r.URL.Path {
	case "/v1/events", "/v1/tools":
		role = r.URL.Query().Get("role")
		listing = role == ""
	case "/v1/roles":
		listing = listing && r.Method != http.MethodPost // a definition: its handler checks define_roles
	}
	switch {
	case listing && !c.roles.All:
		writeErr(w, http.StatusForbidden, forge.TypeRefused, fmt.Sprintf("client %s may call only some roles (%s): listings over every role need \"*\"; ask for one role (e.g. /v1/roles/%s, /v1/events?role=%s)",
			c.Name, strings.Join(c.roles.Names, ", "), c.roles.Names[0], c.roles.Names[0]))
		return r, false
	case role != "" && !c.MayCall(role):
		writeErr(w, http.StatusForbidden, forge.TypeRefused, fmt.Sprintf("client %s may not call role %s (its roles: %s); ask the operator to add the role to the client in the clients file",
			c.Name, role, strings.Join(c.roles.Names, ", ")))
		return r, false
	}
	return r.WithContext(forge.WithClient(r.Context(), c.Name)), true
}

// MCP wraps the MCP streamable HTTP handler so that its sessions carry the client: each request
// has the client's TokenInfo (its name as UserID, so that a session is bound to the client that
// opened it, and its roles as scopes that the MCP tools check, see mcp.RoleScope). The server's
// gate has already checked the token and the rate.
func (cs *Clients) MCP(h http.Handler) http.Handler {
	return auth.RequireBearerToken(func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		c := cs.Lookup(token)
		if c == nil {
			return nil, auth.ErrInvalidToken
		}
		ti := &auth.TokenInfo{UserID: c.Name, Expiration: time.Now().Add(24 * time.Hour)}
		if c.roles.All {
			ti.Scopes = []string{mcp.RoleScope("*")}
		}
		for _, r := range c.roles.Names {
			ti.Scopes = append(ti.Scopes, mcp.RoleScope(r))
		}
		ti.Scopes = append(ti.Scopes, defineScopes(c.define)...)
		return ti, nil
	}, nil)(h)
}
