package mock

// A service answers one Xbox service's calls: its routes, each answered
// from the world alone. Every service is a value holding a *world and
// nothing else, so it reads and writes its part of the world and cannot
// reach the Handler: the pipeline (pipeline.go) calls it, never the other
// way round.
type service interface {
	routes() []route
}

// services returns the services the mock answers, by the Service of the
// limits rules whose hosts they answer at.
func services(w *world) map[string]service {
	return map[string]service{
		"profile":            profileService{w},
		"presence":           presenceService{w},
		"social":             socialService{w},
		"peoplehub":          peopleHubService{w},
		"titlehub":           titleHubService{w},
		"achievements":       achievementsService{w},
		"stats-read":         statsService{w},
		"leaderboards":       leaderboardsService{w},
		"mpsd":               mpsdService{w},
		"mpsd-search-handle": searchHandleService{w},
		"smartmatch":         smartmatchService{w},
		"privacy":            privacyService{w},
		"reputation":         reputationService{w},
		"usersearch":         userSearchService{w},
	}
}

// routesOf returns every service's routes, by the service's name.
func routesOf(svcs map[string]service) map[string][]route {
	out := make(map[string][]route, len(svcs))
	for name, s := range svcs {
		out[name] = s.routes()
	}
	return out
}
