// Package sandbox runs code that a language model wrote, safely and fast.
//
// It defines what every backend shares: the Sandbox and Tester interfaces, Source, Program,
// Signature (derived from go/ast by ParseSignature, with a JSON Schema of the parameters), Input,
// Output, Capabilities, Limits, the typed *Error whose Kind the failure classifier maps onto a
// class, and Host, the single implementation of the host API policy (forge/host) that guest code
// reaches through either backend. Backends live in sandbox/yaegi (in-process interpreter, optional
// worker processes) and sandbox/wasm (compiled to WebAssembly, run by wazero).
package sandbox
