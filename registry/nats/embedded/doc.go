// Package embedded runs NATS JetStream servers inside the process: a single node for `forge serve
// --nats-embedded DIR` (Start, StartWith) and for single-node tests (StartNode), and a JetStream
// cluster on loopback for the fleet tests (StartCluster), whose nodes can be stopped and restarted.
// Without a token they listen on loopback only: they are for one machine.
//
// It is a package of its own, apart from the store client in registry/nats, because the server
// (github.com/nats-io/nats-server/v2) is the largest dependency of forge's build: the default
// forge binary leaves it out, and only a binary built with `-tags natsembedded` (and tests, which
// import this package) links it in. This package must not import registry/nats, whose own tests
// import it.
package embedded
