// args: []
// want: [true, true]
// backends: yaegi
package artifact

import (
	"regexp"
	"regexp/syntax"
)

// Narrow compiles . and (?s). with regexp/syntax and writes into the instructions' Rune: natively
// these are two slices of the package's own, from which every later Compile in the process
// decides what . matches, the host's regexps included. In-process yaegi gives each program
// copies, so regexps compiled afterwards still match any letter. (Under wasm the slices are the
// guest's own and the program narrows its own dot: it runs on yaegi only.)
func Narrow() []bool {
	for _, pat := range []string{".", "(?s)."} {
		re, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			return nil
		}
		prog, err := syntax.Compile(re.Simplify())
		if err != nil {
			return nil
		}
		for i := range prog.Inst {
			if r := prog.Inst[i].Rune; len(r) > 1 {
				r[len(r)-2] = 'z'
			}
		}
	}
	return []bool{regexp.MustCompile("^.$").MatchString("b"), regexp.MustCompile("(?s)^.$").MatchString("b")}
}
