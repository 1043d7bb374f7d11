package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/artifactforge/forge/internal/redact"
	natsstore "github.com/artifactforge/forge/registry/nats"
)

// startNATSServer starts the embedded NATS server (registry/nats/embedded.StartWith) in a binary
// built with -tags natsembedded (serve_nats.go); it is nil in the default binary, which leaves the
// server, the largest dependency of the build, out.
var startNATSServer func(dir, host string, port int, token string) (clientURL string, stop func(), err error)

// errNoEmbeddedNATS is what `forge serve --nats-embedded` says in a binary built without the server.
var errNoEmbeddedNATS = errors.New("serve: --nats-embedded: this forge binary was built without the embedded NATS server (the default build leaves it out: it is the largest part of the build); " +
	"build forge with it: go install -tags natsembedded ./cmd/forge (or run it from the source tree: go run -tags natsembedded ./cmd/forge serve --nats-embedded DIR), " +
	"or run a NATS server yourself (nats-server -js -sd DIR) and pass --store nats://127.0.0.1:4222/forge")

// defaultNATSListen is where `forge serve --nats-embedded` listens unless --nats-listen says
// otherwise: loopback, on the NATS client port, so that the quickstart's URL is always
// nats://127.0.0.1:4222/forge.
const defaultNATSListen = "127.0.0.1:4222"

// startEmbeddedNATS starts the embedded single-node JetStream server of `forge serve
// --nats-embedded DIR`, listening on listen (HOST:PORT; port 0 picks a free one), and points the
// store at it unless --store names one. It returns the store URL other processes use (no
// credentials in it) and the server's stop, which the caller runs after closing the forge.
//
// If $NATS_TOKEN is set, the server requires it of every client (the store connection of this
// process reads it from there too, as the nats CLI does); listening beyond loopback requires it.
func (a *app) startEmbeddedNATS(dir, listen string, log *slog.Logger) (storeURL string, stop func(), err error) {
	if startNATSServer == nil {
		return "", nil, errNoEmbeddedNATS
	}
	if a.storeFlag != "" && !strings.HasPrefix(a.storeFlag, "nats://") {
		return "", nil, usagef("serve: --nats-embedded keeps the store on the embedded server, but --store names %s; leave --store out (or name a bucket there: --store nats://127.0.0.1:4222/NAME)", redact.URL(a.storeFlag))
	}
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return "", nil, usagef("serve: --nats-listen %q is not HOST:PORT (e.g. 127.0.0.1:4222): %v", listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", nil, usagef("serve: --nats-listen %q: port %q is not a number from 0 (a free port) to 65535", listen, portStr)
	}
	if port != 0 {
		// The embedded server reports a port in use only by not becoming ready; ask first.
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return "", nil, fmt.Errorf("serve: the embedded NATS server cannot listen on %s: %w; pick another --nats-listen (port 0: a free one), or connect to the server already there with --store nats://%s/forge", listen, err, listen)
		}
		ln.Close()
	}
	token := natsstore.Secret(os.Getenv("NATS_TOKEN"))
	clientURL, stop, err := startNATSServer(dir, host, port, token.Reveal())
	if err != nil {
		return "", nil, fmt.Errorf("serve: start the embedded NATS server in %s: %w", dir, err)
	}
	storeURL = clientURL + "/" + natsstore.DefaultName
	if a.storeFlag == "" {
		a.storeFlag = storeURL
	} else {
		storeURL = a.storeFlag
	}
	// The URL goes out redacted: --store may carry user:password@ or token@ (redact.URL).
	shown := redact.URL(storeURL)
	attrs := []any{slog.String("dir", dir), slog.String("listen", net.JoinHostPort(host, strconv.Itoa(portOf(clientURL, port)))),
		slog.String("store", shown), slog.Bool("token_required", token != "")}
	log.Info("embedded NATS JetStream server started; other forge processes use --store with this store URL", attrs...)
	if !a.jsonOut {
		fmt.Fprintf(a.stdout, "forge store %s (embedded NATS server in %s", shown, dir)
		if token != "" {
			fmt.Fprint(a.stdout, "; clients need the token of $NATS_TOKEN")
		}
		fmt.Fprintln(a.stdout, ")")
	}
	return storeURL, stop, nil
}

// portOf is the port of a nats://HOST:PORT URL (def if it has none).
func portOf(u string, def int) int {
	_, rest, _ := strings.Cut(u, "://")
	if _, p, err := net.SplitHostPort(rest); err == nil {
		if n, err := strconv.Atoi(p); err == nil {
			return n
		}
	}
	return def
}
