//go:build race

package main

// raceEnabled: yaegi v0.16.1's ExecuteWithContext writes its results after returning when a
// deadline stops a run (an upstream data race); scenarios that rely on deadlines skip under -race.
const raceEnabled = true
