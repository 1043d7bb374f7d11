//go:build race

package bench

// raceEnabled: yaegi v0.16.1's ExecuteWithContext writes its results after returning when a
// cancelled context stops a run (an upstream data race); tests that stop runs in flight skip
// under -race.
const raceEnabled = true
