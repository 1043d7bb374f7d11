// args: []
// want: "rw"
package artifact

type reader interface{ read() string }
type writer interface{ write() string }
type readWriter interface {
	reader
	writer
}

type file struct{}

func (file) read() string  { return "r" }
func (file) write() string { return "w" }

func Use() string {
	var rw readWriter = file{}
	var r reader = rw
	return r.read() + rw.write()
}
