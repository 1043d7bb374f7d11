// args: {"in": {"tags": {"a": [1, 2], "b": null}, "name": "q"}}
// want: {"Name": "q", "N": 2, "Nil": ["b"]}
package artifact

import "sort"

type In struct {
	Name string           `json:"name"`
	Tags map[string][]int `json:"tags"`
}

type Out struct {
	Name string
	N    int
	Nil  []string
}

func Scan(in In) Out {
	o := Out{Name: in.Name, N: len(in.Tags)}
	for k, v := range in.Tags {
		if v == nil {
			o.Nil = append(o.Nil, k)
		}
	}
	sort.Strings(o.Nil)
	return o
}
