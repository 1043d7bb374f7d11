//go:build race

package yaegi

// raceEnabled is set under -race: yaegi v0.16.1's ExecuteWithContext writes its named results from
// both its goroutine and its caller when the context ends first (an upstream data race, harmless
// for us: the interpreter is discarded), so tests that stop an interpreter inside
// ExecuteWithContext skip under -race: package initializers and test runs. A program's calls do
// not use it (see instance.call) and run under -race.
const raceEnabled = true
