package mock

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
)

// The Real-Time Activity wire, as XSAPI speaks it (microsoft/xbox-live-api,
// Source/Services/RealTimeActivityManager/real_time_activity_connection.cpp):
// one websocket at wss://rta.xboxlive.com/connect with the subprotocol
// rta.xboxlive.com.V2, every message a JSON array whose first element is
// its type:
//
//	client: [1, SEQUENCE_N, RESOURCE_URI]            subscribe
//	service: [1, SEQUENCE_N, CODE_N, SUB_ID, DATA]   its answer
//	client: [2, SEQUENCE_N, SUB_ID]                  unsubscribe
//	service: [2, SEQUENCE_N, CODE_N]                 its answer
//	service: [3, SUB_ID, DATA]                       an event
//	service: [4]                                     resync: re-read state
//
// The resource URIs are the ones XSAPI's subscriptions build
// (Source/Services/Presence/*_subscription.cpp, Social/
// social_relationship_change_subscription.cpp, Multiplayer/
// multiplayer_subscription.cpp).

// RTAHost is the host of the Real-Time Activity service, RTAPath the path
// of its websocket and RTASubprotocol the subprotocol XSAPI asks for.
const (
	RTAHost        = "rta.xboxlive.com"
	RTAPath        = "/connect"
	RTASubprotocol = "rta.xboxlive.com.V2"
)

// The message types.
const (
	rtaSubscribe   = 1
	rtaUnsubscribe = 2
	rtaEvent       = 3
	rtaResync      = 4
)

// The status codes of an answer (XSAPI's ErrorCode).
const (
	rtaSuccess            = 0
	rtaUnknownResource    = 1
	rtaSubscriptionLimit  = 2    // E_XBL_RTA_SUBSCRIPTION_LIMIT_REACHED
	rtaNoResourceData     = 3    // E_XBL_RTA_ACCESS_DENIED
	rtaThrottled          = 1001 // XSAPI resubscribes after min(attempt², 60) s
	rtaServiceUnavailable = 1002 // the same
)

// Bounds of the mock's RTA: a client message's bytes (XSAPI's are a few
// dozen), a resource URI's, subscriptions per connection (the mock's
// choice: no published figure), connections at once, subscriptions of all
// connections at once (about 150 bytes each, TestRTASubscriptionBytes:
// 15 MB; without it one token's 1,000 connections of 1,000 subscriptions
// held 250 MB).
const (
	maxRTAMessage = 4 << 10
	maxRTAURI     = 512
	maxRTASubs    = 1000
	maxRTAConns   = 1000
	maxRTAAllSubs = 100_000
)

// rtaRequest is a client message: a subscribe (uri) or an unsubscribe
// (sub).
type rtaRequest struct {
	kind int
	seq  uint32
	uri  string
	sub  uint32
}

var errRTAMessage = errors.New("not an RTA subscribe or unsubscribe message")

// parseRTARequest reads one client message. It refuses anything but a
// subscribe or an unsubscribe in XSAPI's array form, numbers that are not
// 32-bit unsigned integers and a URI longer than maxRTAURI.
func parseRTARequest(b []byte) (rtaRequest, error) {
	var a []json.RawMessage
	if json.Unmarshal(b, &a) != nil || len(a) != 3 { // one JSON text: nothing after the array (a Decoder's More misses "]")
		return rtaRequest{}, errRTAMessage
	}
	var r rtaRequest
	kind, ok1 := uint32Of(a[0])
	seq, ok2 := uint32Of(a[1])
	if !ok1 || !ok2 {
		return rtaRequest{}, errRTAMessage
	}
	r.kind, r.seq = int(kind), seq
	switch r.kind {
	case rtaSubscribe:
		if json.Unmarshal(a[2], &r.uri) != nil || r.uri == "" || len(r.uri) > maxRTAURI {
			return rtaRequest{}, errRTAMessage
		}
	case rtaUnsubscribe:
		if r.sub, ok1 = uint32Of(a[2]); !ok1 {
			return rtaRequest{}, errRTAMessage
		}
	default:
		return rtaRequest{}, errRTAMessage
	}
	return r, nil
}

// uint32Of reads a JSON number that is a 32-bit unsigned integer.
func uint32Of(m json.RawMessage) (uint32, bool) {
	n, err := strconv.ParseUint(string(m), 10, 32)
	return uint32(n), err == nil
}

// rtaKind is what a resource URI names.
type rtaKind uint8

const (
	rtaDevices  rtaKind = iota + 1 // a user's device presence
	rtaTitle                       // a user's presence in one title
	rtaFriends                     // a user's social relationships
	rtaSessions                    // the caller's MPSD sessions (shoulder taps)
)

// rtaResource is a resource URI, read. Sessions are the subscriber's own:
// its xuid is the subscriber's (rtaConn.subscribe sets it), so that a
// shoulder tap reaches its members' subscriptions only.
type rtaResource struct {
	kind  rtaKind
	xuid  string
	title string
}

// key is the resource as the hub indexes it: one form for each, whatever
// the case or scheme the client wrote.
func (r rtaResource) key() string {
	switch r.kind {
	case rtaDevices:
		return "devices/" + r.xuid
	case rtaTitle:
		return "title/" + r.xuid + "/" + r.title
	case rtaFriends:
		return "friends/" + r.xuid
	}
	return "sessions/" + r.xuid
}

// parseRTAResource reads the resource URIs XSAPI builds:
//
//	https://userpresence.xboxlive.com/users/xuid(N)/devices
//	https://userpresence.xboxlive.com/users/xuid(N)/titles/TITLE
//	http://social.xboxlive.com/users/xuid(N)/friends
//	https://sessiondirectory.xboxlive.com/connections/
//
// The scheme (http or https) and the host's case do not matter; both are
// ASCII, as XSAPI builds them (Unicode folding would take "httpſ" for
// "https" and "xboxlİve" for "xboxlive").
func parseRTAResource(uri string) (rtaResource, bool) {
	scheme, rest, ok := strings.Cut(uri, "://")
	host, path, _ := strings.Cut(rest, "/")
	if !ok || !safetext.IsASCII(scheme) || !safetext.IsASCII(host) ||
		!strings.EqualFold(scheme, "https") && !strings.EqualFold(scheme, "http") {
		return rtaResource{}, false
	}
	switch strings.ToLower(host) {
	case "sessiondirectory.xboxlive.com":
		return rtaResource{kind: rtaSessions}, path == "connections/" || path == "connections"
	case "userpresence.xboxlive.com", "social.xboxlive.com":
	default:
		return rtaResource{}, false
	}
	seg := strings.Split(path, "/")
	if len(seg) < 3 || seg[0] != "users" {
		return rtaResource{}, false
	}
	x, ok := strings.CutPrefix(seg[1], "xuid(")
	x, ok2 := strings.CutSuffix(x, ")")
	if !ok || !ok2 || xblid.CheckXUID(x) != nil {
		return rtaResource{}, false
	}
	x = strings.Clone(x) // a subscription holds its 16 bytes, not the URI
	social := strings.EqualFold(host, "social.xboxlive.com")
	switch {
	case social && len(seg) == 3 && seg[2] == "friends":
		return rtaResource{kind: rtaFriends, xuid: x}, true
	case !social && len(seg) == 3 && seg[2] == "devices":
		return rtaResource{kind: rtaDevices, xuid: x}, true
	case !social && len(seg) == 4 && seg[2] == "titles" && xblid.CheckTitle(seg[3]) == nil:
		return rtaResource{kind: rtaTitle, xuid: x, title: strings.Clone(seg[3])}, true
	}
	return rtaResource{}, false
}

// sentRecord is a client message as the record keeps it: as the mock
// read it (read: a subscribe or an unsubscribe), written again, so that no
// text of the client's but a resource it knows reaches the journal: a
// subscribe to a resource the mock knows with its URI (which can hold
// nothing else), one to another with the URI's size in its place, anything
// else by its size.
func sentRecord(b []byte, req rtaRequest, read bool) []byte {
	if !read {
		return fmt.Appendf(nil, "(not an RTA message, %d bytes)", len(b))
	}
	var arg any = req.sub
	if req.kind == rtaSubscribe {
		arg = req.uri
		if _, ok := parseRTAResource(req.uri); !ok {
			arg = fmt.Sprintf("(an unknown resource, %d bytes)", len(req.uri))
		}
	}
	out, _ := json.Marshal([]any{req.kind, req.seq, arg})
	return out
}

// rtaAnswer is the service's answer to a subscribe: [1, seq, code, sub,
// data]; to an unsubscribe: [2, seq, code].
func rtaAnswer(kind int, seq uint32, code int, sub uint32, data any) []byte {
	var b []byte
	if kind == rtaUnsubscribe {
		b, _ = json.Marshal([]any{kind, seq, code})
	} else {
		b, _ = json.Marshal([]any{kind, seq, code, sub, data})
	}
	return b
}

// rtaEventMessage is an event: [3, sub, data].
func rtaEventMessage(sub uint32, data any) []byte {
	b, _ := json.Marshal([]any{rtaEvent, sub, data})
	return b
}
