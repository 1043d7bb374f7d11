// Package difftest holds the differential test of the sandbox backends (difftest_test.go): wasm
// is the semantic oracle, and yaegi, in-process and in worker processes, must give the same
// answer as wasm for every valid corpus program and every HumanEval-X canonical solution, or
// refuse the program at Compile with an error that names the construct and says what to write
// (sandbox.KindCompile with a Hint). The package has no code of its own.
package difftest
