// args: [{"Name": "b", "count": 5, "Xcount": 6, "xcount": 7}]
// want: ["{\"Name\":\"a\",\"Inner\":{\"V\":1}}", "b", 0, {"Name": "r", "Inner": {"V": 3}}]
package artifact

// encoding/json never reads or writes unexported fields, whatever their tags. yaegi v0.16.1 builds
// its structs with every field exported (count becomes Xcount) and encoded them:
// {"Name":"a","Xcount":2,...}; the rewrite tags them json:"-".

import "encoding/json"

type inner struct {
	V     int
	extra int
}

type item struct {
	Name  string
	count int `json:"count"`
	Inner inner
	a, b  string "x:\"y\""
}

func Encode(in item) []any {
	b, _ := json.Marshal(item{Name: "a", count: 2, Inner: inner{1, 2}})
	return []any{string(b), in.Name, in.count, item{Name: "r", count: 4, Inner: inner{3, 4}}}
}
