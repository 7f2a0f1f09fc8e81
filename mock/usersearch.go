package mock

import (
	"net/http"
	"strings"
)

// The user search service, contract 1 (OpenXbox/xbox-webapi-python
// usersearch provider get_live_search; tests/data/responses/
// usersearch_live_search.json): GET /suggest?q=Q answers the world's
// accounts whose gamertag holds Q (without case), those that start with it
// first, then by gamertag.

// maxSuggestions is how many accounts one search answers.
const maxSuggestions = 8

type suggestion struct {
	Text   string `json:"text"`
	Result struct {
		ID            string  `json:"id"`
		Gamertag      string  `json:"gamertag"`
		DisplayPicURI string  `json:"displayPicUri"`
		Score         float64 `json:"score"`
	} `json:"result"`
}

func usersearchRoutes() []route {
	return []route{{http.MethodGet, pat("/suggest"), serveSuggest, "1"}}
}

func serveSuggest(h *Handler, c *call) {
	q := strings.ToLower(strings.TrimSpace(c.query("q")))
	if q == "" || len(q) > 4*maxGamertag {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "q must name 1 to 15 characters of a gamertag")
		return
	}
	out := struct {
		Results []suggestion `json:"results"`
	}{Results: []suggestion{}}
	for _, x := range h.searchGamertags(q, maxSuggestions) {
		var s suggestion
		s.Text = h.gamertagOf(x)
		s.Result.ID, s.Result.Gamertag, s.Result.DisplayPicURI = x, s.Text, profileValues["gamedisplaypicraw"]
		out.Results = append(out.Results, s)
	}
	writeJSON(c.w, http.StatusOK, out)
}
