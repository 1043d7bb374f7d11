package learner

import (
	"math"
	"strings"
	"unicode"
)

// BM25 parameters (the usual Okapi values).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// posting is one entry's term frequency for one term.
type posting struct {
	doc int32
	tf  float32
}

// index is the inverted index of one domain file's entries (content and reasoning).
type index struct {
	entries  []Entry
	lens     []float32 // tokens per entry
	totalLen float64
	postings map[string][]posting
}

func buildIndex(entries []Entry) *index {
	ix := &index{entries: entries, lens: make([]float32, len(entries)), postings: make(map[string][]posting)}
	tf := map[string]int{}
	for i, e := range entries {
		clear(tf)
		n := 0
		eachToken(e.Content+" "+e.Reasoning, func(t string) {
			tf[t]++
			n++
		})
		ix.lens[i] = float32(n)
		ix.totalLen += float64(n)
		for t, c := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), tf: float32(c)})
		}
	}
	return ix
}

// stopWords are too common in lessons to tell them apart.
var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "are": true, "was": true, "with": true, "that": true, "this": true,
	"not": true, "its": true, "from": true, "into": true, "has": true, "have": true, "but": true,
	"a": true, "an": true, "of": true, "to": true, "in": true, "is": true, "it": true, "on": true, "or": true,
	"be": true, "as": true, "at": true, "by": true, "if": true, "no": true,
}

// eachToken calls fn with each lower-case word of s (letters and digits; '.' joins identifiers such
// as "time.now", which is also yielded in parts) that is not a stop word.
func eachToken(s string, fn func(string)) {
	start := -1
	emit := func(w string) {
		if len(w) < 2 || stopWords[w] {
			return
		}
		fn(w)
	}
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := strings.ToLower(strings.Trim(s[start:end], "."))
		start = -1
		if w == "" {
			return
		}
		if strings.Contains(w, ".") {
			emit(w)
			for _, p := range strings.Split(w, ".") {
				emit(p)
			}
			return
		}
		emit(w)
	}
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || (r == '.' && start >= 0) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(s))
}

// queryTerms are the distinct tokens of a query.
func queryTerms(q string) []string {
	seen := map[string]bool{}
	var out []string
	eachToken(q, func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	})
	return out
}

// corpusStats are the BM25 statistics over every index searched by one recall, so that scores
// from several domains are comparable.
type corpusStats struct {
	n     float64
	avgdl float64
	idf   []float64 // per query term
}

func statsFor(ixs []*index, terms []string) corpusStats {
	var st corpusStats
	total := 0.0
	for _, ix := range ixs {
		st.n += float64(len(ix.entries))
		total += ix.totalLen
	}
	if st.n > 0 {
		st.avgdl = total / st.n
	}
	if st.avgdl == 0 {
		st.avgdl = 1
	}
	st.idf = make([]float64, len(terms))
	for i, t := range terms {
		df := 0.0
		for _, ix := range ixs {
			df += float64(len(ix.postings[t]))
		}
		// The BM25+ style floor keeps idf positive for a term in most entries.
		st.idf[i] = math.Log(1 + (st.n-df+0.5)/(df+0.5))
	}
	return st
}

// score adds each entry's BM25 score for terms into scores (indexed like ix.entries, all zero on
// entry) and returns the entries it touched, appended to touched.
func (ix *index) score(terms []string, st corpusStats, scores []float64, touched []int32) []int32 {
	for i, t := range terms {
		idf := st.idf[i]
		for _, p := range ix.postings[t] {
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			tf := float64(p.tf)
			dl := float64(ix.lens[p.doc])
			scores[p.doc] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/st.avgdl))
		}
	}
	return touched
}
