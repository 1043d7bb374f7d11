// args: [{"name": "box", "w": 2, "h": 3}]
// want: 6
package artifact

type Rect struct {
	Name string `json:"name"`
	W    int    `json:"w"`
	H    int    `json:"h"`
}

func Area(r Rect) int { return r.W * r.H }
