// Package sandbox runs code that a language model wrote, safely and fast.
//
// It defines what every backend shares: the Sandbox and Tester interfaces, Source, Program,
// Signature (derived from go/ast by ParseSignature, with a JSON Schema of the parameters), Input,
// Output, Capabilities, Limits, the typed *Error whose Kind the failure classifier maps onto a
// class, and Host, the single implementation of the host API policy that guest code reaches
// through either backend. Backends live in sandbox/yaegi (in-process interpreter, optional worker
// processes) and sandbox/wasm (compiled to WebAssembly, run by wazero).
//
// What both backends must agree on lives here too: CheckReturns (the gate's "missing return"
// check, which an interpreter would not make), OrderArgs/AppendArgs (JSON args by name or position
// onto the parameters) and UnmarshalArg (JSON args into parameters; a number landing in an any is
// int for an integer literal that fits, float64 otherwise; no argument has capacity past its end).
// The policy gate both backends run before compiling is sandbox/gate. The caps on what the host
// takes from guest code, whatever Limits say, are here too: MaxErrorBytes (error and panic text,
// see CapMessage), MaxLogLines, MaxHostRequestBytes and MaxCallArgsBytes. A call that could not get
// a free instance or worker in time fails as KindCapacity, never as the code's deadline.
//
// Guest code imports the host API as "forge/host", with the same surface in every backend:
//
//	host.Get(url string) (string, error)                          // Capabilities.HTTP
//	host.Do(req host.Request) (host.Response, error)              // Capabilities.HTTP
//	host.Log(msg string); host.Logf(format string, args ...any)   // Capabilities.Log
//	host.Now() time.Time                                          // Capabilities.Now
//	host.Rand() float64; host.RandIntn(n int) int                 // Capabilities.Rand
//	host.Call(role, method string, args any) (string, error)      // Capabilities.Call, JSON result
//	host.CallInto(role, method string, args any, out any) error   // Capabilities.Call
//
// A function used without its capability is a policy violation that fails the call even if the
// guest ignores the error.
package sandbox
