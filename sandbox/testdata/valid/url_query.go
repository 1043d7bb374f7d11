// args: ["https://x.example/p?q=go&n=2"]
// want: "go"
package artifact

import "net/url"

func Q(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	return u.Query().Get("q"), nil
}
