// args: [2]
// want: 16
package artifact

type shape interface{ area() float64 }
type square struct{ s float64 }
type rect struct{ w, h float64 }

func (q square) area() float64 { return q.s * q.s }
func (r rect) area() float64   { return r.w * r.h }

func Total(s float64) float64 {
	t := 0.0
	for _, sh := range []shape{square{s}, rect{s, 3 * s}} {
		t += sh.area()
	}
	return t
}
