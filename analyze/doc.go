// Package analyze finds rate-limit problems in recorded Xbox services
// traffic, as Microsoft's Xbox Live Trace Analyzer does, so a title team can
// gate certification on a trace: HAR files (what browsers, Fiddler and
// proxies export) and Fiddler .saz archives go in, a Report comes out.
//
// A Go test can record its own traffic with a Recorder and assert that it
// passes (see the example). xblcall analyze is this package on the command
// line, with a text table, --json (the Report), --html, and --format junit
// or sarif.
//
// # What is judged
//
// Calls are grouped per user (the Authorization header's userhash; one that
// is not 1 to 20 digits, which may be a token sent in its place, is neither
// kept nor shown: '#' and 16 hex digits of its SHA-256 name the user, an
// empty one, one with white space around it and one of a value past 16 KiB
// too, so that a call that sends a token is never read as one without) and
// per rule of the limits data (a service scope such as "presence/write"),
// a call's path read as a service routes it: percent-decoded, then without
// its "." and ".." segments (limits.RemoveDotSegments). Hosts the limits
// name, and other hosts matching Rules.Services (*.xboxlive.com
// by default, which get the limits' fallback rule, or when the limits have
// none a rule without limits: every rule but call-frequency), are judged;
// calls to any other host are listed in Report.NotJudged, never judged, and
// their 429s are a not-judged warning: limits that cover none of a trace's
// hosts never pass it unsaid. Calls without an Authorization header (as
// Chrome exports a HAR by default) are a no-token finding of their own,
// not a user: they count against no user's limits, but throttled-calls
// judges them per host, as one user's calls, since a 429 is the service's
// verdict whoever sent the call. Real-time activity sockets (ws, wss,
// rta.*, their HAR messages in _webSocketMessages) and the shoulder taps a
// data file records (IsShoulderTap) are counted apart, as the trace
// analyzer leaves taps out of its rules.
//
// # Rules
//
// Each finding names its rule, level, time, user, service, a one-line
// reason and the calls involved (evidence: their indexes in the traces).
//
//   - call-frequency: spans of 15 s and 300 s past 90 % of the burst or
//     sustain limit warn; at or over the limit warn that the service answers
//     429; a 300 s span holding the rule's certification figure (limits
//     data: Certification, else 10 x sustain) fails. A span may start at
//     any call: of overlapping spans the one holding the most calls is
//     reported.
//   - throttled-calls: a single 429 warns; two or more 429s in a row fail,
//     and so does any call sent after a 429's answer arrived and before
//     its Retry-After had passed, to the millisecond (a call sent while
//     the 429 was in flight follows nothing). As RFC 9110 §10.2.3 says, a
//     Retry-After in seconds counts from when the answer was received,
//     where the trace records it (a HAR entry's time, a .saz session's
//     ClientDoneResponse, a data file's ElapsedCallTimeMs; none past
//     about 11.6 days), else from the request's start; an HTTP-date is its
//     own instant.
//   - burst: 3 or more calls within 2 s warn.
//   - repeated-calls: the same method, URL and body again within 5 s warns.
//   - polling: 5 or more identical calls at one interval (each gap within
//     1 % of the first, at most an hour) warn.
//   - small-batch: batch calls listing fewer than 2 users warn.
//   - batch-frequency: batch calls within 2 s of the first of a run warn
//     (one call could have carried them all).
//   - no-token: calls to a judged host without Authorization warn.
//   - not-judged: 429s from a host no rule of the limits covers (a host
//     outside Rules.Services, an in-game events upload) warn: what was
//     not judged there may have failed.
//   - events-burst: 10 or more of a user's in-game events within 5 s warn
//     (the trace analyzer's BurstDetection of inGameEvents; Rules.Events).
//     Events are read from the uploads that carry them: Common Schema 2.1
//     JSON lines to *.data.microsoft.com (a title's event is named
//     "Microsoft.XboxLive.T" and 8 characters, or the XCE bridge's) and
//     Common Schema 1.0 '|' lines to data-vef.xboxlive.com (at least 12
//     fields, the second "{Publisher}_{TitleId}.{Event}", the third the
//     time); the uploads are listed apart, not judged as calls.
//   - sample-title-id: PlayFab calls (a User-Agent naming PlayFab) to
//     <id>.playfabapi.com for one of Rules.SampleTitleIDs (the SDK samples'
//     title IDs) warn: the certification warning XR-003, Title Quality for
//     Submission (the trace analyzer's TitleId rule).
//
// Social Manager's calls (a User-Agent naming SocialManager, as XSAPI's
// Social Manager sends) are exempt from polling, repeated-calls and
// small-batch, as the trace analyzer exempts them (its PR #47): Social
// Manager paces itself. Rules.UserAgent (xblcall analyze --user-agent) names
// a title's own User-Agent: its calls are judged whatever their host, so a
// title's own services are analyzed too (the trace analyzer's custom user
// agent).
//
// The verdict is red when any finding fails, listed or not (Report.Findings
// is bounded; its counts are of all), yellow when there are only
// warnings, green when there is no finding; and incomplete, whatever the
// calls read, when a trace was not read whole (Input.Complete): it ended
// or broke off inside an entry, went past MaxTraceBytes or MaxCalls, or
// held entries that could not be read as calls, or not as one call every
// reader reads alike: a HAR entry without response.status, a host that is
// an IPv4 address in another spelling than dotted decimal, a data file's
// call whose Uri names another host than its Host (each reader's doc says
// which). What was not read may fail, so no gate passes it; the Input
// names the entry and the byte (Input.Gap). One bad byte is no such gap:
// invalid UTF-8 in a string reads as U+FFFD.
//
// A finding quotes a call's method, host and path, never its query: a
// path that decodes to a '?' or '#' (%3F, %23) is quoted cut there.
//
// # Memory
//
// Readers stream: what they hold does not grow with the input; what grows
// is the analysis's record of each call. A string of a JSON trace is read
// to its first 384 KiB and a field of a CSV to its first 128 KiB, and a
// Call keeps its URL to MaxURL bytes and its bodies to MaxBody; a .saz's
// zip directory is read streaming. What the analysis keeps of a call is
// copied and cut (a host or a userhash to 256 bytes), never a part of the
// trace's text: a call costs at most about 350 bytes read and 360 in the
// report (a user and a group of its own), and MaxCalls bounds the calls.
// RELIABILITY.md gives the heap per input byte of each kind of input, and
// of the shapes where a call costs the most for the fewest bytes.
//
// The parameters are data (Rules; ReadRules and LoadRules read them, JSON
// or YAML) and the defaults are the trace analyzer's
// (microsoft/xbox-live-trace-analyzer, Source/XboxLiveTraceAnalyzer.Rules.json,
// Source/Rules/*.cs). Where this package deliberately differs:
//
//   - burst uses the rule's fixed size; the trace analyzer raises it to the
//     trace's own average rate plus two deviations, so a busier trace hides
//     its bursts.
//   - polling looks at consecutive identical calls, not every pair of them
//     (the trace analyzer's pairwise search is quadratic in the calls).
//   - small-batch reports one finding per user, service and batch API with
//     every small call as evidence, not one finding per call.
//   - findings are per user and service, not per console address: a HAR
//     file has no console address, and the limits count per user.
//   - in-game events are grouped per user (the upload's token), not per
//     console; the uploads' other fields (dimensions, multiplayer round
//     ids) are not read.
//
// # Reports for CI
//
// Every finding names the XSAPI functions that make its calls (Finding.APIs:
// the GDK's C API, the C++ API in parentheses), from the trace analyzer's
// endpoint-to-API map (Source/XboxLiveTraceAnalyzer.APIMap.csv), kept as
// data in data/apimap.json. WriteJUnit writes the report as JUnit XML (a
// suite per rule, a failure per failing finding listed, a skipped case
// per warning listed, an error per trace not read whole) and WriteSARIF as SARIF 2.1.0
// (a rule per analyzer rule with its help, a result per finding located in
// its trace, an error result at the byte of a trace not read whole), the
// forms a CI system's test page and code scanning read; RuleInfos holds the
// rules' help. A report lists at most 50 findings per user, service, rule
// and level, and MaxFindings in all; both forms add, per rule, one case or
// result for the findings counted but not listed, failing when one of them
// fails.
//
// # JSON
//
// Report's JSON form is stable under Schema "fgrl.analyze/v2": fields may
// be added, but none changes meaning or goes away without a new schema
// name. Durations are Go duration strings ("1.5s"; throttle.Duration) and
// times RFC 3339. (v2: v1's avgGapNs, minGapNs and bucketNs, integer
// nanoseconds, are avgGap, minGap and bucket.)
package analyze

import "github.com/xblgo/fgrl/limits"

// Analyze analyzes calls under lim and rules (nil for the defaults). The
// evidence indexes are positions in calls.
func Analyze(calls []Call, lim *limits.Limits, rules *Rules) (*Report, error) {
	a, err := New(lim, rules)
	if err != nil {
		return nil, err
	}
	for i := range calls {
		c := calls[i]
		c.Index = i
		a.Add(&c)
	}
	return a.Report(), nil
}
