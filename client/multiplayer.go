package client

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
)

var (
	mpsdAPI       = api{service: "mpsd", host: "sessiondirectory.xboxlive.com", contract: "107", rule: "mpsd"}
	smartmatchAPI = api{service: "smartmatch", host: "smartmatch.xboxlive.com", contract: "103", rule: "smartmatch"}
	reputationAPI = api{service: "reputation", host: "reputation.xboxlive.com", contract: "101", rule: "reputation"}
)

// SessionRef names a multiplayer session.
type SessionRef struct {
	SCID     string `json:"scid"`
	Template string `json:"templateName"`
	Name     string `json:"name"`
}

// check validates r and returns it with its SCID lower-cased.
func (r SessionRef) check(a api) (SessionRef, error) {
	scid, err := normSCID(a, "session scid", r.SCID)
	if err != nil {
		return r, err
	}
	if r.Template == "" || r.Name == "" {
		return r, invalid(a, "the session reference needs scid, template and name")
	}
	r.SCID = scid
	return r, nil
}

func (r SessionRef) path() reqPath {
	return path("serviceconfigs", r.SCID, "sessiontemplates", r.Template, "sessions", r.Name)
}

// GetSession returns a session document (GET .../sessions/{name}).
func (u *User) GetSession(ctx context.Context, ref SessionRef) (json.RawMessage, error) {
	a := mpsdAPI
	a.name = "GetSession"
	ref, err := ref.check(a)
	if err != nil {
		return nil, err
	}
	var doc json.RawMessage
	status, err := u.call(ctx, a, "GET", ref.path(), nil, nil, &doc)
	if err == nil && !isObject(doc) {
		return nil, lacks(a, status, "a session document")
	}
	return doc, err
}

// WriteSession creates or updates a session with doc and returns the
// session as stored, and whether it was created (PUT .../sessions/{name}).
// Like XSAPI, it is sent once: it is not idempotent.
func (u *User) WriteSession(ctx context.Context, ref SessionRef, doc any) (json.RawMessage, bool, error) {
	a := mpsdAPI
	a.name, a.once = "WriteSession", true
	ref, err := ref.check(a)
	if err != nil {
		return nil, false, err
	}
	var out json.RawMessage
	status, err := u.call(ctx, a, "PUT", ref.path(), nil, doc, &out)
	if err == nil && !isObject(out) {
		return nil, false, lacks(a, status, "the session document")
	}
	return out, status == http.StatusCreated, err
}

func isObject(b json.RawMessage) bool { return len(b) > 0 && b[0] == '{' }

// InviteHandle is an invite the service created.
type InviteHandle struct {
	ID          string     `json:"id"`
	Type        string     `json:"type"`
	Version     int        `json:"version"`
	SessionRef  SessionRef `json:"sessionRef"`
	InvitedXUID string     `json:"invitedXuid"`
	SenderXUID  string     `json:"senderXuid"`
	Expiration  string     `json:"expiration"` // RFC 3339
}

// SendInvites invites users to a session, one POST /handles each, and
// returns the invite handles created. Like XSAPI, each is sent once, and a
// failure stops at that user (the handles created so far are returned with
// the error). A handle naming another invitee than its user, or another
// session, is a failure.
func (u *User) SendInvites(ctx context.Context, ref SessionRef, xuids []string) ([]InviteHandle, error) {
	a := mpsdAPI
	a.name, a.once = "SendInvites", true
	ref, err := ref.check(a)
	if err != nil {
		return nil, err
	}
	if err := checkXUIDs(a, "xuids", xuids, 1, 100); err != nil {
		return nil, err
	}
	if err := checkTitle(a, u.c.cfg.TitleID); err != nil {
		return nil, err
	}
	out := make([]InviteHandle, 0, len(xuids))
	for _, x := range xuids {
		h, err := u.sendInvite(ctx, a, ref, x)
		if err != nil {
			return out, err
		}
		out = append(out, h)
	}
	return out, nil
}

// sameSession reports whether two references name one session (MPSD
// compares SCIDs, templates and names without case).
func sameSession(x, y SessionRef) bool {
	return strings.EqualFold(x.SCID, y.SCID) && strings.EqualFold(x.Template, y.Template) && strings.EqualFold(x.Name, y.Name)
}

func (u *User) sendInvite(ctx context.Context, a api, ref SessionRef, xuid string) (InviteHandle, error) {
	type attributes struct {
		TitleID string `json:"titleId"` // decimal, as a string
	}
	in := struct {
		Type             string     `json:"type"`
		SessionRef       SessionRef `json:"sessionRef"`
		Version          int        `json:"version"`
		InvitedXUID      string     `json:"invitedXuid"`
		InviteAttributes attributes `json:"inviteAttributes"`
	}{"invite", ref, 1, xuid, attributes{u.c.cfg.TitleID}}
	var h InviteHandle
	status, err := u.call(ctx, a, "POST", path("handles"), nil, in, &h)
	switch {
	case err != nil:
	case h.ID == "":
		return h, lacks(a, status, `the handle's "id"`)
	case h.InvitedXUID != "" && h.InvitedXUID != xuid: // a handle for another user is not this invite's
		return InviteHandle{}, lacks(a, status, "the handle of the user invited (it names "+safetext.Quote(h.InvitedXUID, 32)+")")
	case h.SessionRef != (SessionRef{}) && !sameSession(h.SessionRef, ref): // nor one to another session
		return InviteHandle{}, lacks(a, status, "a handle to the session invited to (it names "+safetext.Quote(h.SessionRef.Template+"/"+h.SessionRef.Name, 80)+")")
	}
	return h, err
}

// MatchTicketRequest is what CreateMatchTicket asks for.
type MatchTicketRequest struct {
	// Session is the session the ticket's players are in.
	Session SessionRef
	// GiveUp is how long the hopper may search; sent in whole seconds.
	GiveUp time.Duration
	// PreserveSession asks the service to match into Session rather than a
	// new one.
	PreserveSession bool
	// Attributes are the ticket's custom attributes (a JSON object), or nil.
	Attributes map[string]any
}

// MatchTicket is a SmartMatch ticket.
type MatchTicket struct {
	TicketID string `json:"ticketId"`
	WaitTime int    `json:"waitTime"` // estimated seconds
}

// CreateMatchTicket asks a SmartMatch hopper for a match, with the ticket
// body XSAPI sends (POST /serviceconfigs/{scid}/hoppers/{hopper}). Like XSAPI,
// it is sent once.
func (u *User) CreateMatchTicket(ctx context.Context, scid, hopper string, t MatchTicketRequest) (MatchTicket, error) {
	a := smartmatchAPI
	a.name, a.once = "CreateMatchTicket", true
	scid, err := normSCID(a, "scid", scid)
	if err != nil {
		return MatchTicket{}, err
	}
	ref, err := t.Session.check(a)
	if err != nil {
		return MatchTicket{}, err
	}
	if hopper == "" || t.GiveUp < time.Second {
		return MatchTicket{}, invalid(a, "the hopper is required and GiveUp must be at least 1s")
	}
	preserve := "never"
	if t.PreserveSession {
		preserve = "always"
	}
	in := struct {
		GiveUpDuration   int            `json:"giveUpDuration"`
		PreserveSession  string         `json:"preserveSession"`
		TicketSessionRef SessionRef     `json:"ticketSessionRef"`
		TicketAttributes map[string]any `json:"ticketAttributes,omitempty"`
	}{int(t.GiveUp / time.Second), preserve, ref, t.Attributes}
	var mt MatchTicket
	status, err := u.call(ctx, a, "POST", path("serviceconfigs", scid, "hoppers", hopper), nil, in, &mt)
	if err == nil && mt.TicketID == "" {
		return MatchTicket{}, lacks(a, status, `"ticketId"`)
	}
	return mt, err
}

// Feedback is a report on another player's behaviour.
type Feedback struct {
	// Type is one of the service's feedback types, such as
	// "CommsAbusiveVoice" or "FairPlayQuitter".
	Type string
	// Text says why, in the reporter's words; it may be empty.
	Text string
	// Session is the session it happened in, or nil.
	Session *SessionRef
	// EvidenceID names a stored recording or capture, or "".
	EvidenceID string
}

// SubmitReputationFeedback reports a user's behaviour (POST
// /users/xuid(X)/feedback, contract 101); the service answers 202. Like
// XSAPI, it is sent once.
func (u *User) SubmitReputationFeedback(ctx context.Context, xuid string, f Feedback) error {
	a := reputationAPI
	a.name, a.once = "SubmitReputationFeedback", true
	if err := checkXUID(a, "xuid", xuid); err != nil {
		return err
	}
	if f.Type == "" {
		return invalid(a, "the feedback type is required")
	}
	in := struct {
		SessionRef   *SessionRef `json:"sessionRef"` // null when none
		FeedbackType string      `json:"feedbackType"`
		TextReason   string      `json:"textReason"`
		EvidenceID   *string     `json:"evidenceId"` // null when none
	}{FeedbackType: f.Type, TextReason: f.Text}
	if f.Session != nil {
		ref, err := f.Session.check(a)
		if err != nil {
			return err
		}
		in.SessionRef = &ref
	}
	if f.EvidenceID != "" {
		in.EvidenceID = &f.EvidenceID
	}
	_, err := u.call(ctx, a, "POST", userPath(xuid, "feedback"), nil, in, nil)
	return err
}
