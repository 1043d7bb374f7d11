package sandbox

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"strings"
)

// Parse bounds: ParseFile checks them before anything else (type checker, interpreter, go build)
// reads the code, so that a hostile file costs the host at most a bounded parse. The figures and
// how they were chosen are in RATIONALE.md ("Isolation: ...").
const (
	// MaxSourceBytes bounds the file. Model-written artifacts are a few KiB; the largest
	// HumanEval-X solution is under 4 KiB.
	MaxSourceBytes = 256 << 10
	// MaxLineBytes bounds one line: yaegi's compile time grows faster than linearly with the
	// length of one expression (a 200 KB line took 13 s).
	MaxLineBytes = 8 << 10
	// MaxNesting bounds the depth of the syntax tree (expressions, blocks, else-if chains): the
	// type checker and the interpreter's compiler recurse once or more per level.
	MaxNesting = 256
	// MaxConstBytes bounds one string constant, and MaxConstTotalBytes all the string constants
	// a file folds together: concatenation of named constants doubles per declaration, so a few
	// lines name gigabytes.
	MaxConstBytes      = 64 << 10
	MaxConstTotalBytes = 1 << 20
	// MaxConstBits bounds an integer constant, as Go's own type checker does (512 bits): the
	// interpreter's constant folding has no such bound, and a chain of squarings doubles it.
	MaxConstBits = 512
	// maxShift is go/types' bound on a constant shift count.
	maxShift = 1023 - 1 + 52
)

// ParseFile parses code as one Go file. A file without a package clause gets "package artifact;"
// in front, on the same line so that line numbers do not move; the returned string is the code
// actually parsed. The file must keep within the parse bounds (MaxSourceBytes, MaxLineBytes,
// MaxNesting, MaxConstBytes, MaxConstBits): a file past one is a KindCompile error naming the
// bound and its line, checked before the file reaches a type checker or compiler.
func ParseFile(fset *token.FileSet, code string) (*ast.File, string, error) {
	if err := checkText(code); err != nil {
		return nil, code, err
	}
	f, parsed, err := parseFile(fset, code)
	if err != nil {
		return nil, parsed, err
	}
	if err := CheckBounds(fset, f); err != nil {
		return nil, parsed, err
	}
	return f, parsed, nil
}

// checkText checks the bounds that need no parse: size and line length.
func checkText(code string) error {
	if len(code) > MaxSourceBytes {
		return &Error{Kind: KindCompile, Message: fmt.Sprintf("source is %d bytes, over the %d-byte bound", len(code), MaxSourceBytes),
			Hint: "write a smaller program: move data into arguments"}
	}
	line, start := 1, 0
	for i := 0; i <= len(code); i++ {
		if i < len(code) && code[i] != '\n' {
			continue
		}
		if n := i - start; n > MaxLineBytes {
			return &Error{Kind: KindCompile, Line: line, Message: fmt.Sprintf("line %d is %d bytes, over the %d-byte bound", line, n, MaxLineBytes),
				Hint: "break long expressions and literals over several lines"}
		}
		line, start = line+1, i+1
	}
	return nil
}

func parseFile(fset *token.FileSet, code string) (*ast.File, string, error) {
	f, err := parserParse(fset, code)
	if err == nil {
		return f, code, nil
	}
	if strings.Contains(err.Error(), "expected 'package'") {
		code = "package " + PackageName + ";" + code
		f, err = parserParse(fset, code)
		if err == nil {
			return f, code, nil
		}
	}
	return nil, code, CompileError(err)
}

// CheckBounds checks a parsed file's nesting depth and constant sizes (see ParseFile).
func CheckBounds(fset *token.FileSet, f *ast.File) error {
	if err := checkNesting(fset, f); err != nil {
		return err
	}
	return newConstSizer(fset, f).check(f)
}

func checkNesting(fset *token.FileSet, f *ast.File) error {
	depth := 0
	var deep ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if deep != nil {
			return false
		}
		if n == nil {
			depth--
			return false
		}
		depth++
		if depth > MaxNesting {
			deep = n
			return false
		}
		return true
	})
	if deep != nil {
		return &Error{Kind: KindCompile, Line: fset.Position(deep.Pos()).Line,
			Message: fmt.Sprintf("syntax nested more than %d levels deep", MaxNesting),
			Hint:    "flatten the code: fewer nested expressions and blocks, a switch instead of an else-if chain"}
	}
	return nil
}

// constSizer folds the file's constant expressions far enough to bound them: integers exactly
// (with go/constant, refusing any result over MaxConstBits before computing it), strings by
// length only. A name declared as a constant in several scopes takes its largest value, so the
// bound holds whichever declaration a use resolves to. Anything else is unknown (not folded).
type constSizer struct {
	fset  *token.FileSet
	specs map[string][]constDef
	memo  map[*constDef]cval
	busy  map[*constDef]bool
	total int
	err   error
}

type constDef struct {
	expr ast.Expr
	iota int
}

// cval is a folded constant: an integer value, or a string of a known length.
type cval struct {
	kind int // 0 unknown, 1 int, 2 string
	i    constant.Value
	n    int
}

func newConstSizer(fset *token.FileSet, f *ast.File) *constSizer {
	c := &constSizer{fset: fset, specs: map[string][]constDef{}, memo: map[*constDef]cval{}, busy: map[*constDef]bool{}}
	ast.Inspect(f, func(n ast.Node) bool {
		gd, ok := n.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			return true
		}
		var last []ast.Expr
		for i, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			if len(vs.Values) > 0 {
				last = vs.Values
			}
			for j, name := range vs.Names {
				if j < len(last) && name.Name != "_" {
					c.specs[name.Name] = append(c.specs[name.Name], constDef{expr: last[j], iota: i})
				}
			}
		}
		return true
	})
	return c
}

func (c *constSizer) check(f *ast.File) error {
	// Every named constant, then every other expression in the file: constant expressions fold
	// wherever they appear (var x = a + a).
	for _, defs := range c.specs {
		for i := range defs {
			c.def(&defs[i])
		}
	}
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return false
		}
		if c.err != nil {
			return false
		}
		parent := ast.Node(nil)
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		if gd, ok := n.(*ast.GenDecl); ok && gd.Tok == token.CONST {
			return false
		}
		stack = append(stack, n)
		// Count each chain of concatenations once, at its top.
		if be, ok := n.(*ast.BinaryExpr); ok {
			if _, inner := parent.(*ast.BinaryExpr); !inner {
				if _, inner = parent.(*ast.ParenExpr); !inner {
					if v := c.eval(be, -1); v.kind == 2 {
						c.total += v.n
						if c.total > MaxConstTotalBytes {
							c.fail(be, "string constants add up to more than %d bytes", MaxConstTotalBytes)
						}
					}
				}
			}
		}
		return true
	})
	return c.err
}

func (c *constSizer) fail(e ast.Expr, format string, args ...any) cval {
	if c.err == nil {
		c.err = &Error{Kind: KindCompile, Line: c.fset.Position(e.Pos()).Line, Message: fmt.Sprintf(format, args...),
			Hint: "build large strings and numbers at run time (strings.Repeat, math/big), not as constants"}
	}
	return cval{}
}

func (c *constSizer) def(d *constDef) cval {
	if v, ok := c.memo[d]; ok {
		return v
	}
	if c.busy[d] {
		return cval{} // a cycle: the type checker reports it
	}
	c.busy[d] = true
	v := c.eval(d.expr, d.iota)
	delete(c.busy, d)
	c.memo[d] = v
	if v.kind == 2 {
		c.total += v.n
		if c.total > MaxConstTotalBytes {
			return c.fail(d.expr, "string constants add up to more than %d bytes", MaxConstTotalBytes)
		}
	}
	return v
}

// ident folds a name: the largest of the constants declared with it.
func (c *constSizer) ident(name string, iota int) cval {
	if name == "iota" && iota >= 0 {
		return cval{kind: 1, i: constant.MakeInt64(int64(iota))}
	}
	defs := c.specs[name]
	var best cval
	for i := range defs {
		v := c.def(&defs[i])
		switch {
		case best.kind == 0:
			best = v
		case v.kind == 2 && best.kind == 2 && v.n > best.n:
			best = v
		case v.kind == 1 && best.kind == 1 && bitLen(v.i) > bitLen(best.i):
			best = v
		}
	}
	return best
}

func bitLen(v constant.Value) int {
	if v.Kind() != constant.Int {
		return 0
	}
	return constant.BitLen(v)
}

func (c *constSizer) eval(e ast.Expr, iota int) cval {
	if c.err != nil {
		return cval{}
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		switch e.Kind {
		case token.STRING:
			return cval{kind: 2, n: len(e.Value)}
		case token.INT, token.CHAR:
			v := constant.MakeFromLiteral(e.Value, e.Kind, 0)
			if v.Kind() == constant.Int {
				return cval{kind: 1, i: v}
			}
		}
		return cval{}
	case *ast.Ident:
		return c.ident(e.Name, iota)
	case *ast.ParenExpr:
		return c.eval(e.X, iota)
	case *ast.UnaryExpr:
		x := c.eval(e.X, iota)
		if x.kind == 1 && (e.Op == token.SUB || e.Op == token.ADD || e.Op == token.XOR) {
			return cval{kind: 1, i: constant.UnaryOp(e.Op, x.i, 0)}
		}
		return cval{}
	case *ast.CallExpr:
		// A conversion (T(x)) keeps its operand's size; len(s) of a constant is an int.
		if len(e.Args) != 1 {
			return cval{}
		}
		x := c.eval(e.Args[0], iota)
		if id, ok := e.Fun.(*ast.Ident); ok && id.Name == "len" && x.kind == 2 {
			return cval{kind: 1, i: constant.MakeInt64(int64(x.n))}
		}
		return x
	case *ast.BinaryExpr:
		x, y := c.eval(e.X, iota), c.eval(e.Y, iota)
		if x.kind == 0 || y.kind == 0 {
			return cval{}
		}
		if x.kind == 2 || y.kind == 2 {
			if e.Op != token.ADD || x.kind != y.kind {
				return cval{}
			}
			n := x.n + y.n
			if n > MaxConstBytes {
				return c.fail(e, "string constant of %d bytes, over the %d-byte bound", n, MaxConstBytes)
			}
			return cval{kind: 2, n: n}
		}
		switch e.Op {
		case token.SHL:
			s, ok := constant.Uint64Val(y.i)
			if !ok || s > maxShift {
				return c.fail(e, "constant shift count %s is too large (at most %d)", y.i, maxShift)
			}
			if bitLen(x.i)+int(s) > MaxConstBits+1 {
				return c.fail(e, "integer constant over %d bits", MaxConstBits)
			}
			return cval{kind: 1, i: constant.Shift(x.i, e.Op, uint(s))}
		case token.SHR:
			s, ok := constant.Uint64Val(y.i)
			if !ok || s > maxShift {
				return cval{}
			}
			return cval{kind: 1, i: constant.Shift(x.i, e.Op, uint(s))}
		case token.MUL:
			if bitLen(x.i)+bitLen(y.i) > MaxConstBits+1 {
				return c.fail(e, "integer constant over %d bits", MaxConstBits)
			}
		case token.QUO, token.REM:
			if constant.Sign(y.i) == 0 {
				return cval{}
			}
			if e.Op == token.QUO {
				return cval{kind: 1, i: constant.BinaryOp(x.i, token.QUO_ASSIGN, y.i)} // integer division
			}
		case token.ADD, token.SUB, token.AND, token.OR, token.XOR, token.AND_NOT:
		default:
			return cval{} // comparisons, && and ||: booleans
		}
		v := constant.BinaryOp(x.i, e.Op, y.i)
		if v.Kind() != constant.Int {
			return cval{}
		}
		if bitLen(v) > MaxConstBits+1 {
			return c.fail(e, "integer constant over %d bits", MaxConstBits)
		}
		return cval{kind: 1, i: v}
	}
	return cval{}
}

func parserParse(fset *token.FileSet, code string) (*ast.File, error) {
	return parser.ParseFile(fset, "artifact.go", code, parser.ParseComments|parser.SkipObjectResolution)
}
