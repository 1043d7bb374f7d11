package symbols

import (
	"regexp/syntax"
	"slices"
)

// syntaxCompile is the guest's regexp/syntax.Compile. The native one points the Rune of the
// instructions it compiles . and (?s). to (InstRuneAny, InstRuneAnyNotNL) at two slices of the
// package's own, shared by every program the process compiles: guest code writing into
// prog.Inst[i].Rune changed what . matches in every regexp the host and other programs compiled
// afterwards (Compile chooses those instructions by reading the slices). Each such Rune is a copy
// here; every other Rune is the parsed Regexp's, which is the caller's, as natively.
func syntaxCompile(re *syntax.Regexp) (*syntax.Prog, error) {
	p, err := syntax.Compile(re)
	if p != nil {
		for i := range p.Inst {
			if op := p.Inst[i].Op; op == syntax.InstRuneAny || op == syntax.InstRuneAnyNotNL {
				p.Inst[i].Rune = slices.Clone(p.Inst[i].Rune)
			}
		}
	}
	return p, err
}
