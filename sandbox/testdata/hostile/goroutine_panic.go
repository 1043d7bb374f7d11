// args: []
// kind: policy
package artifact

func Crash() int {
	go func() { panic("kill the host") }()
	return 1
}
