// args: ["2024-02-28"]
// want: "2024-02-29"
package artifact

import "time"

func NextDay(s string) (string, error) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return "", err
	}
	return t.AddDate(0, 0, 1).Format("2006-01-02"), nil
}
