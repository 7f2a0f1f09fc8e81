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

// userSearchService answers the user search service.
type userSearchService struct{ *world }

func (s userSearchService) routes() []route {
	return []route{{http.MethodGet, pat("/suggest"), s.serveSuggest, "1"}}
}

func (s userSearchService) serveSuggest(c *call) {
	q := strings.ToLower(strings.TrimSpace(c.query("q")))
	if q == "" || len(q) > 4*maxGamertag {
		writeError(c.w, http.StatusBadRequest, "BadRequest", "q must name 1 to 15 characters of a gamertag")
		return
	}
	out := struct {
		Results []suggestion `json:"results"`
	}{Results: []suggestion{}}
	for _, x := range s.searchGamertags(q, maxSuggestions) {
		var sg suggestion
		sg.Text = s.gamertagOf(x)
		sg.Result.ID, sg.Result.Gamertag, sg.Result.DisplayPicURI = x, sg.Text, profileValues["gamedisplaypicraw"]
		out.Results = append(out.Results, sg)
	}
	writeJSON(c.w, http.StatusOK, out)
}
