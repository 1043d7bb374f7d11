// args: []
// want: ["-0500 ","-0500 ","-0500 ","-0500 ","*json.Decoder"]
package artifact

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

type decoder interface{ Decode(any) error }

type framed struct {
	*json.Decoder
	Name string
}

// Decodes decodes times through json.Decoder.Decode taken as a value, not called: a method
// value, an interface's method value, a promoted method value of an embedding struct, and
// json.Unmarshal as a function value. -05:00 is New York's offset in January: each time must come
// out in an unnamed fixed zone, as under wasm, never the host's EST. The decoder's type prints as
// it does natively. ((*json.Decoder).Decode, a method expression, is left out: yaegi v0.16.1
// panics on any method expression of a package's pointer type.)
func Decodes() []string {
	const s = `"2020-01-01T00:00:00-05:00"`
	dec := json.NewDecoder(strings.NewReader(strings.Repeat(s+" ", 3)))
	var ts [4]time.Time
	f := dec.Decode
	var i decoder = dec
	h := i.Decode
	w := framed{Decoder: dec}
	p := w.Decode
	u := json.Unmarshal
	errs := []error{f(&ts[0]), h(&ts[1]), p(&ts[2]), u([]byte(s), &ts[3])}
	var out []string
	for k, t := range ts {
		if errs[k] != nil {
			return []string{errs[k].Error()}
		}
		out = append(out, t.Format("MST")+" "+t.Location().String())
	}
	var any1 any = dec
	return append(out, fmt.Sprintf("%T", any1))
}
