// args: []
// want: ["A+1", "B+2", "C+3", "D+4", "E+5", 3, 12, "F+6"]
package artifact

import (
	"math/big"
	"time"
)

// Own writes through pointers to package types that are the program's own, in every statement
// position the write check rewrites (multi-target, headers, range, select, labels, multi-line):
// each write is checked and allowed, with the program's meaning unchanged.
func Own() []any {
	var a, b, c, d, e, f time.Location
	pa, pb := &a, &b
	*pa, *pb = *time.FixedZone("A", 3600), *time.FixedZone("B", 7200)
	if *(&c) = *time.FixedZone("C", 3*3600); true {
	}
	ch := make(chan time.Location, 1)
	ch <- *time.FixedZone("D", 4*3600)
	var ok bool
	select {
	case *(&d), ok = <-ch:
	}
	pe := &e
	for _, *pe = range []time.Location{*time.FixedZone("X", 0), *time.FixedZone("E", 5*3600)} {
	}
	n := new(big.Int)
	i := 0
	for *n = *big.NewInt(1); i < 2; *n = *new(big.Int).Add(n, big.NewInt(1)) {
		i++
	}
	k := big.NewInt(10)
L:
	*k = *new(big.Int).Add(k,
		big.NewInt(2))
	if false {
		goto L
	}
	*(&f) =
		*time.FixedZone("F", 6*3600)
	names := []any{}
	for _, l := range []*time.Location{&a, &b, &c, &d, &e} {
		name, off := time.Date(2020, 1, 1, 0, 0, 0, 0, l).Zone()
		names = append(names, name+"+"+string(rune('0'+off/3600)))
	}
	_ = ok
	name, off := time.Date(2020, 1, 1, 0, 0, 0, 0, &f).Zone()
	return append(names, n.Int64(), k.Int64(), name+"+"+string(rune('0'+off/3600)))
}
