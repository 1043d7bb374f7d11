// args: {"p": null}
// want: "none"
package artifact

type P struct{ X int }

func Name(p *P) string {
	if p == nil {
		return "none"
	}
	return "some"
}
