package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/mcp"
	"github.com/artifactforge/forge/server"
)

func init() { register(newServeCmd) }

// splitList reads a comma-separated list (an environment variable's), without empty entries.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func newServeCmd(a *app) *cobra.Command {
	var addr, token string
	var maxBody int64
	var callTimeout time.Duration
	var noMCP bool
	var natsDir, natsListen string
	var clientsFile string
	var modelCalls func() (forge.ModelCallBound, error)
	var defineRoles func() (forge.DefineSwitches, error)
	var allowedHosts, corsOrigins []string
	var headerTimeout, bodyTimeout time.Duration
	var maxConns int
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:7077]",
		Short: "Serve calls, operator verbs, events, metrics and MCP over HTTP",
		Long: `Serve runs the forge as an HTTP server: POST /v1/call/{role}/{method} (body: the args,
response: the Outcome), operator verbs under /v1/admin/ (only with --admin-token or
$FORGE_ADMIN_TOKEN, sent as "Authorization: Bearer TOKEN"), read endpoints (/v1/roles,
/v1/artifacts, /v1/history, /v1/stale, /v1/stats), GET /v1/events as Server-Sent Events (filters
role, method, class, source, trace), Prometheus /metrics, /healthz, /readyz, and the MCP server
(streamable HTTP) at /mcp, and the operator console at /ui (README, "Console"). It watches its
store: changes by other forge processes are served at once. It binds 127.0.0.1 unless told otherwise; SIGTERM or SIGINT finishes in-flight calls first.

With --nats-embedded DIR it also runs a single-node NATS JetStream server (data in DIR, listening
on 127.0.0.1:4222 unless --nats-listen says otherwise) and keeps the store there: the quickstart of
the fleet store. Other forge processes on this machine use it with --store nats://127.0.0.1:4222/forge
(the URL is printed at start); the server stops when serve does. It needs a forge built with the
server: go install -tags natsembedded ./cmd/forge (the default build leaves it out).

With --clients FILE (or $FORGE_CLIENTS) every request but /healthz, /readyz, /metrics, the
console's files and the operator verbs needs a client's bearer token; each client may call only
the roles the file gives it, at most at its rate, and never shares a live instance with another
client (README, "Client identities").

Guards (README, "Serving"): on loopback it answers only to localhost, 127.0.0.1 and [::1] (add
names with --allowed-hosts or $FORGE_ALLOWED_HOSTS, comma-separated); calls and MCP messages need
"Content-Type: application/json"; state-changing requests from another site are refused, and CORS
is off unless --cors-origins (or $FORGE_CORS_ORIGINS) names the origins of the web apps that may
call it. Headers must arrive within --header-timeout, bodies within --body-timeout, and at most
--max-conns connections are open at once.

GET /v1/tools?format=mcp|openai|anthropic serves the methods as tool definitions (` + "`forge tools`" + `).
With --allow-define-roles (or $FORGE_ALLOW_DEFINE_ROLES=1) clients define roles with POST /v1/roles
(?dry_run=1 only checks) and forge_define_role; with --clients, only clients with define_roles: true
(README, "For agents").`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if token == "" {
				token = os.Getenv("FORGE_ADMIN_TOKEN")
			}
			lw := server.NewLogWriter(a.stderr) // slog's lock is held for an append, not a write
			defer lw.Close()                    // last: after the shutdown's own lines
			log := slog.New(slog.NewJSONHandler(lw, nil))
			if clientsFile == "" {
				clientsFile = os.Getenv("FORGE_CLIENTS")
			}
			var clients *server.Clients
			if clientsFile != "" {
				var err error
				if clients, err = server.LoadClients(clientsFile); err != nil {
					return usagef("serve: --clients: %v", err)
				}
			}
			models, err := modelCalls()
			if err != nil {
				return err
			}
			define, err := defineRoles() // --allow-define-roles (tools.go)
			if err != nil {
				return err
			}
			if len(allowedHosts) == 0 {
				allowedHosts = splitList(os.Getenv("FORGE_ALLOWED_HOSTS"))
			}
			if len(corsOrigins) == 0 {
				corsOrigins = splitList(os.Getenv("FORGE_CORS_ORIGINS"))
			}
			so := server.Options{AdminToken: token, MaxBody: maxBody, CallTimeout: callTimeout, Logger: log, RequestLog: lw, Clients: clients,
				AllowedHosts: allowedHosts, CORSOrigins: corsOrigins, HeaderTimeout: headerTimeout, BodyTimeout: bodyTimeout, MaxConns: maxConns,
				DefineRoles: define}
			if err := so.Validate(); err != nil {
				return usagef("serve: %v", err)
			}
			if natsDir != "" {
				_, stopNATS, err := a.startEmbeddedNATS(natsDir, natsListen, log)
				if err != nil {
					return err
				}
				defer stopNATS() // after the forge's Close (deferred later, run first) flushed into it
			}
			f, err := a.openForge(func(o *forge.Options) { o.ModelCalls = clients.ModelCalls(models) })
			if err != nil {
				return err
			}
			defer a.closeForge(f)
			if err := f.Watch(); err != nil {
				log.Warn("watch mode unavailable: changes by other processes are seen within the revalidation poll", slog.String("error", err.Error()))
			}
			extra := map[string]http.Handler{}
			var onShutdown func()
			if !noMCP {
				// No operator tools over HTTP MCP: it has no admin token of its own (use /v1/admin/).
				ms, err := mcp.New(f, mcp.Options{Version: buildVersion().String(), OperatorVerbs: false, DefineRoles: define, CallTimeout: callTimeout})
				if err != nil {
					return err
				}
				defer ms.Close()
				extra["/mcp"] = ms.HTTPHandler()
				if clients != nil {
					extra["/mcp"] = clients.MCP(extra["/mcp"]) // tool calls run as the token's client, on its roles
				}
				onShutdown = ms.CloseSessions
			}
			so.Extra, so.OnShutdown = extra, onShutdown
			srv := server.New(f, so)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("serve: listen on %s: %w (pick another --addr)", addr, err)
			}
			log.Info("serving", slog.String("addr", ln.Addr().String()), slog.String("store", f.Store().Location()), slog.Bool("admin_verbs", token != ""))
			if !a.jsonOut {
				fmt.Fprintf(a.stdout, "forge serving on http://%s\n", ln.Addr())
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			// The warm-up stops waiting when serve returns, before the forge closes.
			wctx, wcancel := context.WithCancel(ctx)
			warmed := make(chan struct{})
			go func() { defer close(warmed); warmAtStart(wctx, f, log) }()
			defer func() { wcancel(); <-warmed }()
			if err := srv.Serve(ctx, ln); err != nil {
				return err
			}
			log.Info("stopped: writing buffered metrics and events")
			return nil
		},
	}
	defineRoles = defineSwitchFlags(cmd)
	cmd.Flags().StringVar(&addr, "addr", server.DefaultAddr, "address to listen on (host:port; 127.0.0.1 keeps it local)")
	cmd.Flags().StringVar(&token, "admin-token", "", "token for the operator verbs (default $FORGE_ADMIN_TOKEN; none: verbs off)")
	cmd.Flags().Int64Var(&maxBody, "max-body", server.DefaultMaxBody, "largest request body in bytes")
	cmd.Flags().DurationVar(&callTimeout, "call-timeout", server.DefaultCallTimeout, "longest a call or verb may take")
	cmd.Flags().StringSliceVar(&allowedHosts, "allowed-hosts", nil, "host names the server answers to besides localhost, 127.0.0.1 and [::1] (comma-separated; \"*\": any; default $FORGE_ALLOWED_HOSTS)")
	cmd.Flags().StringSliceVar(&corsOrigins, "cors-origins", nil, "origins of web apps that may call the server (https://app.example.com, comma-separated; default $FORGE_CORS_ORIGINS; none: CORS off, cross-site requests refused)")
	cmd.Flags().DurationVar(&headerTimeout, "header-timeout", server.DefaultHeaderTimeout, "longest a client may take to send a request's headers")
	cmd.Flags().DurationVar(&bodyTimeout, "body-timeout", server.DefaultBodyTimeout, "longest a client may take to send a request's body (from the request's start)")
	cmd.Flags().IntVar(&maxConns, "max-conns", server.DefaultMaxConns, "most connections open at once (more wait to be accepted)")
	cmd.Flags().BoolVar(&noMCP, "no-mcp", false, "do not serve MCP at /mcp")
	modelCalls = modelCallsFlag(cmd)
	cmd.Flags().StringVar(&clientsFile, "clients", "", "client identities (YAML or JSON: [{name, token or token_sha256, roles, rate}]; default $FORGE_CLIENTS): calls need a client's bearer token")
	cmd.Flags().StringVar(&natsDir, "nats-embedded", "", "run an embedded single-node NATS JetStream server with its data in this directory and keep the store on it (nats://127.0.0.1:4222/forge unless --store names another); other forge processes share it with --store")
	cmd.Flags().StringVar(&natsListen, "nats-listen", defaultNATSListen, "where the embedded NATS server listens (HOST:PORT; port 0: a free one); beyond loopback it needs $NATS_TOKEN")
	return cmd
}

// modelCallsFlag adds --model-calls, the bound on each client's model calls of a server (HTTP or
// MCP over stdio): forge.DefaultServeModelCalls unless it or $FORGE_MODEL_CALLS says otherwise.
func modelCallsFlag(cmd *cobra.Command) func() (forge.ModelCallBound, error) {
	var v string
	cmd.Flags().StringVar(&v, "model-calls", "", fmt.Sprintf("model calls each client may spend on new and repaired code, N/h (or /m; off: no bound; default $FORGE_MODEL_CALLS, else %d/h); with --clients, a client's model_calls overrides it", forge.DefaultServeModelCalls.N))
	return func() (forge.ModelCallBound, error) {
		if v == "" {
			v = os.Getenv("FORGE_MODEL_CALLS")
		}
		if v == "" {
			return forge.DefaultServeModelCalls, nil
		}
		b, err := server.ParseModelCalls(v)
		if err != nil {
			return b, usagef("--model-calls: %v", err)
		}
		return b, nil
	}
}
