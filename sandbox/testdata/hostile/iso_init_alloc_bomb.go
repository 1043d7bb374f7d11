// args: []
// isolation: process
// memory: 64MB
// timeout: 5s
// kind: memory
// stage: compile
// backends: yaegi
package artifact

// A package-level initializer that allocates 1.5 GiB: isolated, it runs in the worker under the
// memory cap, never in the host.
var big = make([]byte, 1536<<20)

func init() {
	for i := range big {
		big[i] = 1
	}
}

func F() int { return len(big) }
