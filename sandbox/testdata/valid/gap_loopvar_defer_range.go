// args: [["a", "b", "c"]]
// want: "cba"
package artifact

// As gap_loopvar_defer with a range loop (yaegi v0.16.1 alone gave "ccc").

func Reverse(ws []string) (s string) {
	func() {
		for _, w := range ws {
			defer func() { s += w }()
		}
	}()
	return s
}
