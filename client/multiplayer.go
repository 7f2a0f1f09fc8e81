package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

var (
	mpsdAPI       = api{service: "mpsd", host: "sessiondirectory.xboxlive.com", contract: "107"}
	smartmatchAPI = api{service: "smartmatch", host: "smartmatch.xboxlive.com", contract: "103"}
	reputationAPI = api{service: "reputation", host: "reputation.xboxlive.com", contract: "101"}
)

// SessionRef names a multiplayer session.
type SessionRef struct {
	Scid     string `json:"scid"`
	Template string `json:"templateName"`
	Name     string `json:"name"`
}

func (r SessionRef) path() string {
	return "/serviceconfigs/" + url.PathEscape(r.Scid) + "/sessiontemplates/" + url.PathEscape(r.Template) +
		"/sessions/" + url.PathEscape(r.Name)
}

func (r SessionRef) valid() bool { return r.Scid != "" && r.Template != "" && r.Name != "" }

// GetSession returns a session document (GET .../sessions/{name}).
func (u *User) GetSession(ctx context.Context, ref SessionRef) (json.RawMessage, error) {
	a := mpsdAPI
	a.name = "GetSession"
	if !ref.valid() {
		return nil, invalid(a, "the session reference needs scid, template and name")
	}
	var doc json.RawMessage
	_, err := u.call(ctx, a, "GET", ref.path(), nil, nil, &doc)
	return doc, err
}

// WriteSession creates or updates a session with doc and returns the
// session as stored, and whether it was created (PUT .../sessions/{name}).
// Like XSAPI, it is sent once: it is not idempotent.
func (u *User) WriteSession(ctx context.Context, ref SessionRef, doc any) (json.RawMessage, bool, error) {
	a := mpsdAPI
	a.name, a.once = "WriteSession", true
	if !ref.valid() {
		return nil, false, invalid(a, "the session reference needs scid, template and name")
	}
	var out json.RawMessage
	status, err := u.call(ctx, a, "PUT", ref.path(), nil, doc, &out)
	return out, status == http.StatusCreated, err
}

// SendInvites invites users to a session and returns the invite handle IDs
// (POST /handles, one per user). Like XSAPI, each is sent once.
func (u *User) SendInvites(ctx context.Context, ref SessionRef, xuids []string) ([]string, error) {
	a := mpsdAPI
	a.name, a.once = "SendInvites", true
	if !ref.valid() {
		return nil, invalid(a, "the session reference needs scid, template and name")
	}
	if err := checkCount(a, "xuids", len(xuids), 1, 100); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(xuids))
	for _, x := range xuids {
		in := struct {
			Version     int        `json:"version"`
			Type        string     `json:"type"`
			SessionRef  SessionRef `json:"sessionRef"`
			InvitedXuid string     `json:"invitedXuid"`
		}{1, "invite", ref, x}
		var out struct {
			ID string `json:"id"`
		}
		if _, err := u.call(ctx, a, "POST", "/handles", nil, in, &out); err != nil {
			return ids, err
		}
		ids = append(ids, out.ID)
	}
	return ids, nil
}

// MatchTicket is a SmartMatch ticket.
type MatchTicket struct {
	TicketID string `json:"ticketId"`
	WaitTime int    `json:"waitTime"` // estimated seconds
}

// CreateMatchTicket asks a SmartMatch hopper for a match, with the ticket
// body XSAPI sends (POST /serviceconfigs/{scid}/hoppers/{hopper}). Like XSAPI,
// it is sent once.
func (u *User) CreateMatchTicket(ctx context.Context, scid, hopper string, ticket any) (MatchTicket, error) {
	a := smartmatchAPI
	a.name, a.once = "CreateMatchTicket", true
	if scid == "" || hopper == "" {
		return MatchTicket{}, invalid(a, "scid and hopper are required")
	}
	var t MatchTicket
	_, err := u.call(ctx, a, "POST", "/serviceconfigs/"+url.PathEscape(scid)+"/hoppers/"+url.PathEscape(hopper), nil, ticket, &t)
	return t, err
}

// SubmitReputationFeedback reports a user's behaviour (for example
// "CommsAbusiveVoice") with an optional text (POST
// /users/xuid(X)/feedback). Like XSAPI, it is sent once.
func (u *User) SubmitReputationFeedback(ctx context.Context, xuid, feedbackType, text string) error {
	a := reputationAPI
	a.name, a.once = "SubmitReputationFeedback", true
	if xuid == "" || feedbackType == "" {
		return invalid(a, "xuid and feedback type are required")
	}
	in := struct {
		FeedbackType string `json:"feedbackType"`
		TextReason   string `json:"textReason,omitempty"`
	}{feedbackType, text}
	_, err := u.call(ctx, a, "POST", "/users/xuid("+xuid+")/feedback", nil, in, nil)
	return err
}
