// args: []
// kind: policy
package artifact

import "net/http"

func Get() (int, error) {
	r, err := http.Get("http://example.com")
	if err != nil {
		return 0, err
	}
	return r.StatusCode, nil
}
