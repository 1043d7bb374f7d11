// args: []
// kind: deadline
// stage: compile
package artifact

// Loading the file runs init under the default deadline (2s): Compile must return, classified.
func init() {
	for {
	}
}

func F() int { return 1 }
