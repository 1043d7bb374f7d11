// args: []
// kind: compile
// stage: compile
// contains: string constant
package artifact

// Each constant doubles the one before: c30 names 16 GiB. The host refuses it at parse time,
// before a type checker or interpreter folds it.
const (
	c0  = "xxxxxxxxxxxxxxxx"
	c1  = c0 + c0
	c2  = c1 + c1
	c3  = c2 + c2
	c4  = c3 + c3
	c5  = c4 + c4
	c6  = c5 + c5
	c7  = c6 + c6
	c8  = c7 + c7
	c9  = c8 + c8
	c10 = c9 + c9
	c11 = c10 + c10
	c12 = c11 + c11
	c13 = c12 + c12
	c14 = c13 + c13
	c15 = c14 + c14
	c16 = c15 + c15
	c17 = c16 + c16
	c18 = c17 + c17
	c19 = c18 + c18
	c20 = c19 + c19
	c21 = c20 + c20
	c22 = c21 + c21
	c23 = c22 + c22
	c24 = c23 + c23
	c25 = c24 + c24
	c26 = c25 + c25
	c27 = c26 + c26
	c28 = c27 + c27
	c29 = c28 + c28
	c30 = c29 + c29
)

func F() int { return len(c30) }
