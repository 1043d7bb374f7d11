// args: []
// timeout: 300ms
// kind: deadline
package artifact

func Block() int {
	select {}
}
