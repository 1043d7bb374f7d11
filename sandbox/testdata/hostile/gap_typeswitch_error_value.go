// args: [7]
// kind: compile
// contains: type switch on find(k)
// stage: compile
// backends: yaegi
package artifact

// A type switch on an error with a case of a non-pointer type of the file with methods: yaegi
// v0.16.1 never takes the case (nor the comma-ok assertion). Refused with a hint; wasm answers 7.

type valErr struct{ code int }

func (e valErr) Error() string { return "bad" }

func find(k int) error { return valErr{k} }

func Code(k int) int {
	switch err := find(k).(type) {
	case valErr:
		return err.code
	}
	return 0
}
