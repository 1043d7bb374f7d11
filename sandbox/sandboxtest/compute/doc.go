// Package compute holds the compute benchmarks every backend runs beside native Go: each file
// but this one is one artifact (one exported func(int) int and its helpers), compiled natively
// here and embedded as source by sandboxtest (ComputeCases), so the native figure and the
// sandboxed one always come from the same code.
package compute
