// args: [3]
// kind: compile
// contains: method expression (*counter).inc used as a value
// stage: compile
// backends: yaegi
package artifact

// A method expression of the file's own type as a value: yaegi v0.16.1 fails when it is assigned
// ("reflect.Set: value of type func() is not assignable"). Refused on yaegi; wasm answers 7.
// Called on the spot ((*counter).inc(c)) it is rewritten and runs: gap_methexpr_call.

type counter struct{ n int }

func (c *counter) inc()    { c.n++ }
func (c counter) get() int { return c.n }

func Count(k int) int {
	c := &counter{n: 4}
	inc := (*counter).inc
	get := counter.get
	for i := 0; i < k; i++ {
		inc(c)
	}
	return get(*c)
}
