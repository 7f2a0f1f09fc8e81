package client

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
)

var profileAPI = api{service: "profile", host: "profile.xboxlive.com", contract: "2", rule: "profile"}

// Profile is one user's profile settings.
type Profile struct {
	XUID string
	// IsSponsoredUser marks a guest account sponsored by another user.
	IsSponsoredUser bool
	// Settings maps a setting name ("Gamertag", "Gamerscore",
	// "GameDisplayPicRaw", ...) to its value.
	Settings map[string]string
}

// GetProfiles returns the named settings of 1 to 100 users
// (POST /users/batch/profile/settings).
//
// An answer holding a record of a user not asked for, or two records of
// one user, is an error: none of its records is returned.
func (u *User) GetProfiles(ctx context.Context, xuids, settings []string) ([]Profile, error) {
	a := profileAPI
	a.name = "GetProfiles"
	ps, _, err := u.getProfiles(ctx, a, xuids, settings)
	return ps, err
}

// getProfiles is GetProfiles for the API a names (GetProfile's errors name
// GetProfile), with the answer's status.
func (u *User) getProfiles(ctx context.Context, a api, xuids, settings []string) ([]Profile, int, error) {
	if err := checkXUIDs(a, "xuids", xuids, 1, 100); err != nil {
		return nil, 0, err
	}
	var out profileAnswer
	if settings == nil {
		settings = []string{}
	}
	in := struct {
		UserIDs  []string `json:"userIds"`
		Settings []string `json:"settings"`
	}{xuids, settings}
	status, err := u.call(ctx, a, "POST", path("users", "batch", "profile", "settings"), nil, in, &out)
	if err != nil {
		return nil, status, err
	}
	if out.ProfileUsers == nil {
		return nil, status, lacks(a, status, `"profileUsers"`)
	}
	ps := out.profiles()
	if err := onlyAsked(a, status, xuids, ps, profileXUID); err != nil {
		return nil, status, err
	}
	return ps, status, nil
}

// profileAnswer is the profile service's answer.
type profileAnswer struct {
	ProfileUsers []struct {
		ID              string `json:"id"`
		IsSponsoredUser bool   `json:"isSponsoredUser"`
		Settings        []struct {
			ID    string `json:"id"`
			Value string `json:"value"`
		} `json:"settings"`
	} `json:"profileUsers"`
}

func (out *profileAnswer) profiles() []Profile {
	profiles := make([]Profile, 0, len(out.ProfileUsers))
	for _, pu := range out.ProfileUsers {
		p := Profile{XUID: pu.ID, IsSponsoredUser: pu.IsSponsoredUser, Settings: make(map[string]string, len(pu.Settings))}
		for _, s := range pu.Settings {
			p.Settings[s.ID] = s.Value
		}
		profiles = append(profiles, p)
	}
	return profiles
}

// checkCount refuses, without sending, a list whose length the service
// would reject.
func checkCount(a api, what string, n, lo, hi int) error {
	if n < lo || n > hi {
		return &Error{code: hresult.E_INVALIDARG, Service: a.service, API: a.name,
			Message: fmt.Sprintf("%s must hold %d to %d items, not %d", what, lo, hi, n)}
	}
	return nil
}

func invalid(a api, msg string) error {
	return &Error{code: hresult.E_INVALIDARG, Service: a.service, API: a.name, Message: msg}
}

// GetProfile returns the named settings of one user
// (GET /users/xuid(X)/profile/settings?settings=A,B), or, with
// Config.BatchWindow, one GetProfiles for every GetProfile with the same
// settings the acting user makes within the window (a window that
// gathers one lookup sends it alone, as without one).
func (u *User) GetProfile(ctx context.Context, xuid string, settings []string) (Profile, error) {
	a := profileAPI
	a.name = "GetProfile"
	if err := checkXUID(a, "xuid", xuid); err != nil {
		return Profile{}, err
	}
	if w := u.c.cfg.BatchWindow; w > 0 {
		return u.c.profiles.lookup(ctx, u.xuid, settingsKind(settings), xuid, w)
	}
	all, status, err := u.getProfile(ctx, a, xuid, settings)
	if err != nil {
		return Profile{}, err
	}
	p, ok := byXUID(all, profileXUID)[xuid]
	if !ok {
		return Profile{}, missingProfile(status)
	}
	return p, nil
}

// profileBatch is the profile batcher's call: one GetProfiles, under
// GetProfile's name, for key's acting user and the settings its kind names.
func (c *Client) profileBatch(ctx context.Context, key batchKey, xuids []string) (map[string]Profile, int, error) {
	a := profileAPI
	a.name = "GetProfile"
	u := c.As(key.user)
	get := u.getProfiles
	if len(xuids) == 1 { // alone: no batch call listing one user
		get = func(ctx context.Context, a api, xuids, settings []string) ([]Profile, int, error) {
			return u.getProfile(ctx, a, xuids[0], settings)
		}
	}
	all, status, err := get(ctx, a, xuids, kindSettings(key.kind))
	return byXUID(all, profileXUID), status, err
}

// getProfile is one user's lookup as its own call: the single-user
// endpoint, not a batch call listing one user, which the trace analyzer's
// small-batch rule flags (analyze.RuleSmallBatch).
func (u *User) getProfile(ctx context.Context, a api, xuid string, settings []string) ([]Profile, int, error) {
	var out profileAnswer
	q := url.Values{"settings": {strings.Join(settings, ",")}}
	status, err := u.call(ctx, a, "GET", userPath(xuid, "profile", "settings"), q, nil, &out)
	if err != nil {
		return nil, status, err
	}
	if out.ProfileUsers == nil {
		return nil, status, lacks(a, status, `"profileUsers"`)
	}
	ps := out.profiles()
	if err := onlyAsked(a, status, []string{xuid}, ps, profileXUID); err != nil {
		return nil, status, err
	}
	return ps, status, nil
}

// missingProfile is GetProfile's error for an answer of status without
// the user's record.
func missingProfile(status int) error {
	a := profileAPI
	a.name = "GetProfile"
	return lacks(a, status, "the user's record")
}

func profileXUID(p Profile) string { return p.XUID }

// namedBy reports whether p is the profile of gamertag, as far as its
// settings tell: a gamertag setting it holds (classic, modern or unique
// modern) names it, without case, or it holds none.
func namedBy(p Profile, gamertag string) bool {
	held := false
	for _, s := range []string{"Gamertag", "ModernGamertag", "UniqueModernGamertag"} {
		if v, ok := p.Settings[s]; ok && v != "" {
			if sameGamertag(v, gamertag) || s == "UniqueModernGamertag" && sameGamertag(withoutSuffix(v), gamertag) {
				return true
			}
			held = true
		}
	}
	return !held
}

// sameGamertag reports whether a and b are one gamertag in another case:
// the same characters, letters compared without case, but an ASCII letter
// only with an ASCII letter, so that the long s (U+017F) is not "s" nor
// the Kelvin sign "K", as strings.EqualFold would have them.
func sameGamertag(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		a, b = a[na:], b[nb:]
		if ra == rb {
			continue
		}
		if (ra < utf8.RuneSelf) != (rb < utf8.RuneSelf) || !strings.EqualFold(string(ra), string(rb)) {
			return false
		}
	}
	return a == b
}

// withoutSuffix returns a unique modern gamertag without its suffix
// ("Name#1234" is Name's: the recorded leaderboard answer holds "Modern
// FaceRocker#1234" for the modern gamertag "Modern FaceRocker"), or v
// when it has none.
func withoutSuffix(v string) string {
	i := strings.LastIndexByte(v, '#')
	if i < 0 || i == len(v)-1 || strings.Trim(v[i+1:], "0123456789") != "" {
		return v
	}
	return v[:i]
}

// byXUID indexes records by their XUID.
func byXUID[T any](all []T, xuid func(T) string) map[string]T {
	m := make(map[string]T, len(all))
	for _, v := range all {
		m[xuid(v)] = v
	}
	return m
}

// GetProfileByGamertag returns the named settings of the user whose
// gamertag is gamertag (GET /users/gt(G)/profile/settings?settings=A,B): its
// XUID is the way from a gamertag to a XUID.
// An answer whose id is no XUID, or whose gamertag settings name another
// gamertag, is an error. Gamertags are compared without case, an ASCII
// letter only with an ASCII letter (the long s is not "s"), and a unique
// modern gamertag with or without its suffix ("Name#1234" names Name).
func (u *User) GetProfileByGamertag(ctx context.Context, gamertag string, settings []string) (Profile, error) {
	a := profileAPI
	a.name = "GetProfileByGamertag"
	if g := strings.TrimSpace(gamertag); g == "" || g != gamertag || utf8.RuneCountInString(g) > 15 || !utf8.ValidString(g) {
		return Profile{}, invalid(a, "gamertag "+safetext.Quote(gamertag, 40)+" is not 1 to 15 characters without outer spaces")
	}
	if err := checkCount(a, "settings", len(settings), 1, 100); err != nil {
		return Profile{}, err
	}
	var out profileAnswer
	q := url.Values{"settings": {strings.Join(settings, ",")}}
	status, err := u.call(ctx, a, "GET", path("users", "gt("+gamertag+")", "profile", "settings"), q, nil, &out)
	if err != nil {
		return Profile{}, err
	}
	if len(out.ProfileUsers) != 1 {
		return Profile{}, lacks(a, status, `one of "profileUsers"`)
	}
	p := out.profiles()[0]
	if xblid.CheckXUID(p.XUID) != nil {
		return Profile{}, lacks(a, status, "the user's XUID as its id (it is "+safetext.Quote(p.XUID, 32)+")")
	}
	if !namedBy(p, gamertag) {
		return Profile{}, lacks(a, status, "the profile of the gamertag asked for (it is another's)")
	}
	return p, nil
}
