// args: []
// want: ["2020-01-01T00:00:00 -0500 -0500  00 -0500","2020-07-01T00:00:00 -0400 -0400  00 -0400","2020-07-01T00:00:00 UTC +0000 Local 00 UTC","2020-07-01T00:00:00 UTC +0000 UTC 00 UTC","2020-01-01T00:00:00 EST +0000 EST 00 EST","2020-07-01T00:00:00 UTC +0000 UTC 00 UTC","2020-07-01T00:00:00 UTC +0000 UTC 00 UTC","2020-07-01T00:00:00 -0400 -0400  00 -0400"]
package artifact

import "time"

// Parses reads what time.Parse gives for offsets and zone names a host's local zone may know
// (-05:00 in January and -04:00 in July are New York's, EST its abbreviation), for "+00:00",
// for "Z" and for no zone at all: the sandbox's local zone is UTC, so none of them may come out
// in the host's zone.
func Parses() []string {
	var out []string
	for _, v := range [][2]string{
		{time.RFC3339, "2020-01-01T00:00:00-05:00"},
		{time.RFC3339, "2020-07-01T00:00:00-04:00"},
		{time.RFC3339, "2020-07-01T00:00:00+00:00"},
		{time.RFC3339, "2020-07-01T00:00:00Z"},
		{"2006-01-02 15:04 MST", "2020-01-01 00:00 EST"},
		{"2006-01-02 15:04 MST", "2020-07-01 00:00 UTC"},
		{"2006-01-02 15:04", "2020-07-01 00:00"},
		{time.RFC1123Z, "Wed, 01 Jul 2020 00:00:00 -0400"},
	} {
		t, err := time.Parse(v[0], v[1])
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		out = append(out, t.Format("2006-01-02T15:04:05 MST -0700")+" "+t.Location().String()+" "+t.AddDate(0, 6, 0).Format("15 MST"))
	}
	return out
}
