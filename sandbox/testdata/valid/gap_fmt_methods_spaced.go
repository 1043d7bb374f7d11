// func: Spaced
// args: []
// want: ["<1> <2>", "a<1>b", "<1> <2>\n"]
package artifact

// Print arguments of the file's types with an Error or String method are formatted through it
// (yaegi v0.16.1 handed fmt the bare value: "3" for tag(3), "&{7}" for &codeErr{7}); %d and %#v
// keep the value, a nil pointer prints <nil>, and Sprint keeps its spacing between operands.

import "fmt"

type tag int

func (t tag) String() string { return fmt.Sprintf("<%d>", int(t)) }

type codeErr struct{ code int }

func (e *codeErr) Error() string { return fmt.Sprintf("bad %d", e.code) }

func Show() []string {
	t := tag(3)
	var nilErr *codeErr
	return []string{
		fmt.Sprint(t),
		fmt.Sprintf("%v|%d|%q", t, t, t),
		fmt.Sprint(&codeErr{7}),
		fmt.Errorf("e: %v", &codeErr{7}).Error(),
		fmt.Sprint(nilErr),
		fmt.Sprintf("[%s] %d", t, 3),
	}
}

// Spaced: Sprint puts a space between two non-string operands; with a string between, none.
func Spaced() []string {
	return []string{fmt.Sprint(tag(1), tag(2)), fmt.Sprint("a", tag(1), "b"), fmt.Sprintln(tag(1), tag(2))}
}
