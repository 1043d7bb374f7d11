// args: []
// want: ["12:00 UTC Local","12:00 UTC Local","12:00 UTC Local","12:00 UTC Local","12:00 UTC Local"]
package artifact

import "time"

type localer interface{ Local() time.Time }

type stamped struct {
	time.Time
	Name string
}

// Locals takes Time.Local as a method expression on every receiver type Go allows: time.Time,
// *time.Time, an interface of the file, a struct embedding time.Time and a pointer to it. Each
// must give the sandbox's local zone (UTC, named Local), not the host's.
func Locals() []string {
	t := time.Date(2020, 7, 1, 12, 0, 0, 0, time.UTC)
	s := stamped{Time: t}
	a := time.Time.Local
	b := (*time.Time).Local
	c := localer.Local
	d := stamped.Local
	e := (*stamped).Local
	var out []string
	for _, u := range []time.Time{a(t), b(&t), c(t), d(s), e(&s)} {
		out = append(out, u.Format("15:04 MST")+" "+u.Location().String())
	}
	return out
}
