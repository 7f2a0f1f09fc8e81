package client

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/hresult"
)

// Real-Time Activity: subscriptions instead of polling. A user's
// subscriptions share one websocket to the RTA service
// (wss://rta.xboxlive.com/connect, subprotocol rta.xboxlive.com.V2), which
// pushes changes as they happen (User.Subscribe; rtaconn.go runs the
// connection). The wire, as XSAPI speaks it (microsoft/xbox-live-api,
// Source/Services/RealTimeActivityManager/real_time_activity_connection.cpp):
// JSON arrays whose first element is the message type, 1 subscribe, 2
// unsubscribe, 3 event, 4 resync.

// The RTA service's address and subprotocol.
const (
	rtaHost        = "rta.xboxlive.com"
	rtaPath        = "/connect"
	rtaSubprotocol = "rta.xboxlive.com.V2"
)

// The message types and status codes (XSAPI's MessageType and ErrorCode).
const (
	rtaSubscribe   = 1
	rtaUnsubscribe = 2
	rtaEvent       = 3
	rtaResync      = 4

	rtaUnknownResource    = 1
	rtaSubscriptionLimit  = 2
	rtaNoResourceData     = 3
	rtaThrottled          = 1001
	rtaServiceUnavailable = 1002
)

// maxRTAMessage bounds a message the client reads from the service: a
// presence record is the largest XSAPI expects.
const maxRTAMessage = 64 << 10

// Resource is what a subscription follows. Make one with PresenceOf,
// TitlePresenceOf, RelationshipsOf or Sessions; the zero Resource is none.
type Resource struct {
	uri         string
	xuid, title string
}

// PresenceOf is a user's device presence: whether they are signed in on a
// device (the acting user's own, or a user they follow).
func PresenceOf(xuid string) Resource {
	return Resource{uri: "https://userpresence.xboxlive.com/users/xuid(" + xuid + ")/devices", xuid: xuid}
}

// TitlePresenceOf is a user's presence in one title: whether they started
// or ended it.
func TitlePresenceOf(xuid, titleID string) Resource {
	return Resource{uri: "https://userpresence.xboxlive.com/users/xuid(" + xuid + ")/titles/" + titleID, xuid: xuid, title: titleID}
}

// RelationshipsOf is a user's social relationships (the acting user's
// own): whom they added, removed or changed.
func RelationshipsOf(xuid string) Resource {
	return Resource{uri: "http://social.xboxlive.com/users/xuid(" + xuid + ")/friends", xuid: xuid}
}

// Sessions is the acting user's MPSD sessions: a shoulder tap for each
// change of a session they are a member of.
func Sessions() Resource {
	return Resource{uri: "https://sessiondirectory.xboxlive.com/connections/"}
}

// URI is the resource URI the service is sent, as XSAPI builds it.
func (r Resource) URI() string { return r.uri }

// XUID is the user the resource is of ("" for Sessions).
func (r Resource) XUID() string { return r.xuid }

// presence reports whether r is a presence resource.
func (r Resource) presence() bool { return strings.HasPrefix(r.uri, "https://userpresence.") }

// Event is what a subscription delivers: *Subscribed, *DevicePresence,
// *TitlePresence, *RelationshipChange, *SessionChange, *Resynced,
// *SubscriptionError or *ConnectionState.
type Event interface{ rtaEvent() }

// Subscribed says a subscription is in force (again, after a reconnect),
// with the state it starts from: the presence record for a presence
// resource (nil when the service sent none, or one of another user), the
// connection id for Sessions (which MPSD members register).
type Subscribed struct {
	Resource     Resource
	Presence     *Presence
	ConnectionID string
}

// DevicePresence is a user signing in or out of a device ("Scarlett",
// "PC", ...).
type DevicePresence struct {
	XUID     string
	Device   string
	LoggedOn bool
}

// TitlePresence is a user starting or ending a title (State "Started" or
// "Ended"). The service's event is "STATE:TITLEID"; one of another state,
// or naming another title than the subscription's, is dropped, where
// XSAPI hands its handler an Unknown state and credits the subscription's
// title whatever the event names.
type TitlePresence struct {
	XUID, TitleID string
	State         string
}

// RelationshipChange is a change of a user's relationships: Type "Added",
// "Removed" or "Changed" with the XUIDs concerned. An event of another
// NotificationType is dropped (XSAPI hands it on as Unknown).
type RelationshipChange struct {
	XUID  string
	Type  string
	XUIDs []string
}

// SessionChange is a shoulder tap: a session the user is a member of
// changed; read it (GetSession) if ChangeNumber is newer than the copy.
type SessionChange struct {
	Session      SessionRef
	ChangeNumber int64
	Branch       string
}

// Resynced says the service asked for a resync: state may have been missed.
// Presence holds the presence records of the users the presence
// subscriptions follow, read again (nil if the read failed: Err says why);
// relationships and sessions are the caller's to read again.
type Resynced struct {
	Presence []Presence
	Err      error
}

// SubscriptionError says the service refused a subscription for good
// (unknown resource, access denied, limit reached); Err is a *Error whose
// HRESULT is E_XBL_RTA_ACCESS_DENIED, E_XBL_RTA_SUBSCRIPTION_LIMIT_REACHED
// or E_XBL_RTA_GENERIC_ERROR.
type SubscriptionError struct {
	Resource Resource
	Err      error
}

// ConnectionState reports the connection: Connected, or not with the
// error that ended or refused it and the wait before the next attempt.
type ConnectionState struct {
	Connected bool
	Err       error
	Attempt   int // connection attempts since the last success
}

func (*Subscribed) rtaEvent()         {}
func (*DevicePresence) rtaEvent()     {}
func (*TitlePresence) rtaEvent()      {}
func (*RelationshipChange) rtaEvent() {}
func (*SessionChange) rtaEvent()      {}
func (*Resynced) rtaEvent()           {}
func (*SubscriptionError) rtaEvent()  {}
func (*ConnectionState) rtaEvent()    {}

// rtaMessage is a message from the service, read.
type rtaMessage struct {
	kind int
	seq  uint32 // subscribe and unsubscribe answers
	code int
	sub  uint32 // a subscribe answer's, an event's
	data json.RawMessage
}

var errRTAMessage = errors.New("client: not an RTA message")

// parseRTAMessage reads one message from the service: a subscribe answer
// [1, seq, code, sub, data] (sub and data only with code 0), an
// unsubscribe answer [2, seq, code], an event [3, sub, data] or a resync
// [4]. Anything else is refused.
func parseRTAMessage(b []byte) (rtaMessage, error) {
	var a []json.RawMessage
	if json.Unmarshal(b, &a) != nil || len(a) == 0 { // one JSON text: nothing after the array (a Decoder's More misses "]")
		return rtaMessage{}, errRTAMessage
	}
	var m rtaMessage
	kind, ok := rtaUint(a[0])
	m.kind = int(kind)
	switch {
	case !ok:
	case m.kind == rtaSubscribe && (len(a) == 3 || len(a) == 5), m.kind == rtaUnsubscribe && len(a) == 3:
		seq, ok1 := rtaUint(a[1])
		code, ok2 := rtaUint(a[2])
		m.seq, m.code = seq, int(code)
		if !ok1 || !ok2 {
			break
		}
		if len(a) == 5 {
			if m.sub, ok = rtaUint(a[3]); !ok {
				break
			}
			m.data = a[4]
		}
		return m, nil
	case m.kind == rtaEvent && len(a) == 3:
		if m.sub, ok = rtaUint(a[1]); ok {
			m.data = a[2]
			return m, nil
		}
	case m.kind == rtaResync && len(a) == 1:
		return m, nil
	}
	return rtaMessage{}, errRTAMessage
}

// rtaUint reads a JSON number that is a 32-bit unsigned integer.
func rtaUint(m json.RawMessage) (uint32, bool) {
	n, err := strconv.ParseUint(string(m), 10, 32)
	return uint32(n), err == nil
}

// event turns an event's data for r into its typed Event, nil for data
// of another shape (XSAPI ignores those too).
func (r Resource) event(data json.RawMessage) Event {
	switch {
	case r.presence() && r.title == "":
		var s string
		if json.Unmarshal(data, &s) != nil {
			return nil
		}
		dev, on, ok := strings.Cut(s, ":")
		if !ok {
			return nil
		}
		return &DevicePresence{XUID: r.xuid, Device: dev, LoggedOn: strings.EqualFold(on, "true")}
	case r.presence():
		var s string
		if json.Unmarshal(data, &s) != nil {
			return nil
		}
		state, titleID, named := strings.Cut(s, ":")
		state = oneOf(state, "Started", "Ended")
		if state == "" || named && titleID != r.title {
			return nil
		}
		return &TitlePresence{XUID: r.xuid, TitleID: r.title, State: state}
	case r.xuid != "":
		var v struct {
			NotificationType string
			Xuids            []string
		}
		if json.Unmarshal(data, &v) != nil {
			return nil
		}
		if typ := oneOf(v.NotificationType, "Added", "Removed", "Changed"); typ != "" {
			return &RelationshipChange{XUID: r.xuid, Type: typ, XUIDs: v.Xuids}
		}
	}
	return nil
}

// oneOf returns the one of names that s spells in any case, or "".
func oneOf(s string, names ...string) string {
	for _, n := range names {
		if strings.EqualFold(s, n) {
			return n
		}
	}
	return ""
}

// sessionTaps turns a Sessions event's data into one SessionChange per
// shoulder tap whose resource names SCID~TEMPLATE~NAME.
func sessionTaps(data json.RawMessage) []Event {
	var v struct {
		ShoulderTaps []struct {
			Resource     string `json:"resource"`
			ChangeNumber int64  `json:"changeNumber"`
			Branch       string `json:"branch"`
		} `json:"shoulderTaps"`
	}
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	var out []Event
	for _, t := range v.ShoulderTaps {
		p := strings.Split(t.Resource, "~")
		if len(p) != 3 {
			continue
		}
		out = append(out, &SessionChange{Session: SessionRef{SCID: p[0], Template: p[1], Name: p[2]},
			ChangeNumber: t.ChangeNumber, Branch: t.Branch})
	}
	return out
}

// rtaRefusal is the error of a subscription refused with code, as XSAPI
// reports it (ConvertRTAErrorCode).
func rtaRefusal(r Resource, code int) error {
	h := hresult.E_XBL_RTA_GENERIC_ERROR
	switch code {
	case rtaSubscriptionLimit:
		h = hresult.E_XBL_RTA_SUBSCRIPTION_LIMIT_REACHED
	case rtaNoResourceData:
		h = hresult.E_XBL_RTA_ACCESS_DENIED
	}
	return &Error{code: h, Service: "rta", API: "Subscribe", Message: "subscription to " + clip(r.uri) + " refused with code " + strconv.Itoa(code)}
}
