package mock

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/internal/wiretest"
)

// arrayPaths adds to paths the path (".titles[].devices") of each value
// of the JSON v that is an array, at any depth.
func arrayPaths(v any, path string, paths map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if _, ok := e.([]any); ok {
				paths[path+"."+k] = true
			}
			arrayPaths(e, path+"."+k, paths)
		}
	case []any:
		for _, e := range v {
			arrayPaths(e, path+"[]", paths)
		}
	}
}

// nullLists returns the paths in v of each null value whose path is in
// lists.
func nullLists(v any, path string, lists map[string]bool) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil && lists[path+"."+k] {
				out = append(out, path+"."+k)
			}
			out = append(out, nullLists(e, path+"."+k, lists)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, nullLists(e, path+"[]", lists)...)
		}
	}
	sort.Strings(out)
	return out
}

// emptyWorld's caller, the recordings' "e", has no friends, no recent
// players and no titles; nobody else's gamertag holds "tux".
var emptyWorld = World{Accounts: []WorldAccount{{XUID: wireAccount.XUID, Gamertag: "e"}, {XUID: "2584878536129841", Gamertag: "Major Nelson"}}}

// TestEmptyListsAreArrays: each call XSAPI sends (internal/wiretest's
// exchanges), made by an account with no friends, recent players, titles,
// achievements or stats, is answered with [] wherever the service's
// recorded answer (internal/wiretest/testdata, which name their sources)
// has a list at that place, never null. Before, social answered
// "people": null where peoplehub answered [].
func TestEmptyListsAreArrays(t *testing.T) {
	checked := 0
	for _, name := range wiretest.Names() {
		t.Run(name, func(t *testing.T) {
			x, err := wiretest.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			lists := map[string]bool{}
			var rec any
			if x.Answer != nil && json.Unmarshal(x.Answer, &rec) == nil {
				arrayPaths(rec, "", lists)
			}
			checked += len(lists)
			c := Config{Account: &wireAccount, World: emptyWorld}
			if x.Scid != "" {
				c.SCIDs = map[string]string{x.Title: x.Scid}
			}
			h := Must(New(c))
			for _, b := range x.Before {
				bx, _ := wiretest.Load(b)
				replayExchange(t, h, bx)
			}
			r := replayExchange(t, h, x)
			var v any
			if json.Unmarshal([]byte(r.body), &v) != nil {
				return // no JSON answer (204, or an error the shape test reports)
			}
			if nulls := nullLists(v, "", lists); len(nulls) > 0 {
				t.Errorf("status %d: null where the service sends a list: %s\n%s", r.status, strings.Join(nulls, ", "), r.body)
			}
		})
	}
	if checked < 20 {
		t.Errorf("%d places of lists in the recordings; the test reads too few", checked)
	}
}
