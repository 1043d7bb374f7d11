// args: []
// caps: {"http": {"allow": ["api.example.com"]}}
// kind: policy
package artifact

import "forge/host"

func Fetch() string {
	body, err := host.Get("http://127.0.0.1:22/")
	if err != nil {
		return "ignored"
	}
	return body
}
