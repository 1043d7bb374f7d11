// args: [{"w": "wide"}]
// kind: args
// contains: param r
package artifact

type Rect struct {
	W int `json:"w"`
}

func Width(r Rect) int { return r.W }
