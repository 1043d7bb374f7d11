package sandbox

import (
	"fmt"
	"go/ast"
	"go/token"
)

// missingReturnHint is what a code generator needs to fix a missing return.
const missingReturnHint = "every path through a function with results must end in a return (or panic): " +
	"add a final return after the last if/for/switch"

// CheckReturns reports, as a KindCompile *Error naming the line of the closing brace, the first
// function (declared or literal) with results whose body can end without a return: Go rejects it
// ("missing return"), but an interpreter runs it and returns zero values. It implements the
// terminating-statement rules of the Go spec on the AST alone (no type information), so every
// backend's gate can run it before compiling.
func CheckReturns(fset *token.FileSet, f *ast.File) error {
	var err error
	ast.Inspect(f, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		var typ *ast.FuncType
		var body *ast.BlockStmt
		name := "func literal"
		switch n := n.(type) {
		case *ast.FuncDecl:
			typ, body, name = n.Type, n.Body, "func "+n.Name.Name
		case *ast.FuncLit:
			typ, body = n.Type, n.Body
		default:
			return true
		}
		if body == nil || typ.Results == nil || len(typ.Results.List) == 0 {
			return true
		}
		if !isTerminatingList(body.List, "") {
			err = &Error{Kind: KindCompile, Line: fset.Position(body.Rbrace).Line,
				Message: fmt.Sprintf("missing return at the end of %s", name), Hint: missingReturnHint}
			return false
		}
		return true
	})
	return err
}

// isTerminating reports whether s is a terminating statement (Go spec, "Terminating statements");
// label is s's label, if any. It follows go/types, except that any call of a function named panic
// counts as the builtin's (a shadowed panic can only make the gate accept more, never reject valid
// code).
func isTerminating(s ast.Stmt, label string) bool {
	switch s := s.(type) {
	case *ast.LabeledStmt:
		return isTerminating(s.Stmt, s.Label.Name)
	case *ast.ExprStmt:
		call, ok := ast.Unparen(s.X).(*ast.CallExpr)
		if !ok {
			return false
		}
		id, ok := ast.Unparen(call.Fun).(*ast.Ident)
		return ok && id.Name == "panic"
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return s.Tok == token.GOTO || s.Tok == token.FALLTHROUGH
	case *ast.BlockStmt:
		return isTerminatingList(s.List, "")
	case *ast.IfStmt:
		return s.Else != nil && isTerminating(s.Body, "") && isTerminating(s.Else, "")
	case *ast.SwitchStmt:
		return isTerminatingSwitch(s.Body, label)
	case *ast.TypeSwitchStmt:
		return isTerminatingSwitch(s.Body, label)
	case *ast.SelectStmt:
		for _, st := range s.Body.List {
			cc, ok := st.(*ast.CommClause)
			if !ok || !isTerminatingList(cc.Body, "") || hasBreakList(cc.Body, label, true) {
				return false
			}
		}
		return true
	case *ast.ForStmt:
		return s.Cond == nil && !hasBreak(s.Body, label, true)
	}
	return false
}

func isTerminatingList(list []ast.Stmt, label string) bool {
	for i := len(list) - 1; i >= 0; i-- { // trailing empty statements are permitted
		if _, ok := list[i].(*ast.EmptyStmt); !ok {
			return isTerminating(list[i], label)
		}
	}
	return false
}

func isTerminatingSwitch(body *ast.BlockStmt, label string) bool {
	hasDefault := false
	for _, st := range body.List {
		cc, ok := st.(*ast.CaseClause)
		if !ok {
			return false
		}
		if cc.List == nil {
			hasDefault = true
		}
		if !isTerminatingList(cc.Body, "") || hasBreakList(cc.Body, label, true) {
			return false
		}
	}
	return hasDefault
}

// hasBreak reports whether s is or contains a break referring to the statement labeled label or,
// if implicit, to the closest enclosing breakable statement.
func hasBreak(s ast.Stmt, label string, implicit bool) bool {
	switch s := s.(type) {
	case *ast.LabeledStmt:
		return hasBreak(s.Stmt, label, implicit)
	case *ast.BranchStmt:
		if s.Tok == token.BREAK {
			return s.Label == nil && implicit || s.Label != nil && s.Label.Name == label
		}
	case *ast.BlockStmt:
		return hasBreakList(s.List, label, implicit)
	case *ast.IfStmt:
		return hasBreak(s.Body, label, implicit) || s.Else != nil && hasBreak(s.Else, label, implicit)
	case *ast.CaseClause:
		return hasBreakList(s.Body, label, implicit)
	case *ast.CommClause:
		return hasBreakList(s.Body, label, implicit)
	case *ast.SwitchStmt:
		return label != "" && hasBreak(s.Body, label, false)
	case *ast.TypeSwitchStmt:
		return label != "" && hasBreak(s.Body, label, false)
	case *ast.SelectStmt:
		return label != "" && hasBreak(s.Body, label, false)
	case *ast.ForStmt:
		return label != "" && hasBreak(s.Body, label, false)
	case *ast.RangeStmt:
		return label != "" && hasBreak(s.Body, label, false)
	}
	return false
}

func hasBreakList(list []ast.Stmt, label string, implicit bool) bool {
	for _, s := range list {
		if hasBreak(s, label, implicit) {
			return true
		}
	}
	return false
}
