//go:build natsembedded

package main

import "github.com/artifactforge/forge/registry/nats/embedded"

// A forge built with -tags natsembedded links the NATS server in, for `forge serve --nats-embedded`.
func init() { startNATSServer = startEmbeddedServer }

// startEmbeddedServer starts the single-node JetStream server of `forge serve --nats-embedded`.
func startEmbeddedServer(dir, host string, port int, token string) (string, func(), error) {
	return embedded.StartWith(dir, embedded.Options{Host: host, Port: port, Token: token})
}
