// args: []
// kind: compile
// stage: compile
// contains: 512 bits
package artifact

// Squaring doubles the bits per line; Go's type checker stops at 512 bits, the interpreter's
// constant folding does not.
const (
	a = 1 << 62
	b = a * a
	c = b * b
	d = c * c
	e = d * d
	f = e * e
	g = f * f
	h = g * g
	i = h * h
	j = i * i
	k = j * j
	l = k * k
	m = l * l
	n = m * m
	o = n * n
	p = o * o
	q = p * p
	r = q * q
	s = r * r
	t = s * s
	u = t * t
	v = u * u
	w = v * v
	x = w * w
	y = x * x
	z = y * y
)

func F() bool { return z > 0 }
