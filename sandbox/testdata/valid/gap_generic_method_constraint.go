// args: [[3, 1]]
// want: "#1,#3"
package artifact

import (
	"sort"
	"strconv"
	"strings"
)

type id int

func (i id) String() string { return "#" + strconv.Itoa(int(i)) }

type labeled interface {
	~int
	String() string
}

func labels[T labeled](xs []T) string {
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return strings.Join(out, ",")
}

func Labels(xs []int) string {
	ids := make([]id, len(xs))
	for i, x := range xs {
		ids[i] = id(x)
	}
	return labels(ids)
}
