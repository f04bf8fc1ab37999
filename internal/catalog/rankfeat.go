package catalog

import "slices"

// Ranking features beyond BM25F, tuned on bench/searchbench's tuning set
// and confirmed on its held-out set (bench/RESULTS.md). BM25 adds up what
// each query word meets anywhere in a tool, by stem; these look at the
// tool's NAME, which says what the tool does to what.

// surfaceWeight is added to a tool's score factor per query word whose very
// form, not only its stem, is a word of the tool's name: "the open issues"
// meets list_issues more than get_issue, "slack get users" slack_get_users
// more than slack_get_user_profile, "read a file" get_file_contents more
// than push_files. Stemming makes singular and plural one word; a name
// that chose one of them says whether the tool is about one thing or many.
const surfaceWeight = 0.25

// nameWords returns the words of a tool's name that say what it does:
// the name's tokens without a leading run of the backend's name
// ("slack_post_message" of backend slack: post, message), all of them if
// the name is nothing but the backend's name.
func nameWords(name, backend []token) []token {
	i := 0
	for i < len(name) && slices.ContainsFunc(backend, func(b token) bool { return b.stem == name[i].stem }) {
		i++
	}
	if i == len(name) {
		return name
	}
	return name[i:]
}

// applyNameForms multiplies each matching document's BM25F score by 1 plus
// surfaceWeight per distinct query word whose very form is a word of its
// name (see surfaceWeight). count is zeroed scratch, one per document, and
// is left zeroed.
func (ix *index) applyNameForms(scores, count []float64, toks []token) {
	for i, t := range toks {
		if slices.ContainsFunc(toks[:i], func(u token) bool { return u.word == t.word }) {
			continue // a form counts once
		}
		for _, d := range ix.nameForms[t.word] {
			if scores[d] > 0 {
				count[d]++
			}
		}
	}
	for _, t := range toks {
		for _, d := range ix.nameForms[t.word] {
			if count[d] > 0 {
				scores[d] *= 1 + surfaceWeight*count[d]
				count[d] = 0
			}
		}
	}
}
