// Package transport provides an http.RoundTripper that calls Xbox services
// the way XSAPI does (retries, backoff, Retry-After, a fail-fast cache) and
// keeps a local copy of each Fine-Grained Rate Limiting budget, so that calls
// wait or are refused locally instead of collecting 429s.
//
// # What it shares with XSAPI
//
// The rules follow libHttpClient Source/HTTP/httpcall.cpp (HC_CALL::ShouldRetry,
// HC_CALL::ShouldFailFast) and XSAPI Source/Shared/http_call_wrapper_internal.cpp
// (XblHttpCall::CalcHttpTimeout, HandleAuthError):
//
//   - 408, 429, 500, 502, 503 and 504 are retried, and so is every transport
//     failure but "no network" (a network that is down), as libHttpClient
//     does on Windows and GDK, where it reports every other failure as E_FAIL;
//   - attempt n waits [2^n, 2^(n+1)) s, capped at 60 s; with a Retry-After,
//     max(that, Retry-After × [1, 1.2)); after a 500, at least 10 s;
//   - retries run in a 20 s window from the first attempt, and only while
//     more than 5 s and at least the wait + 5 s are left;
//   - each attempt times out after the time left in the window, at least
//     5 s and at most 30 s, computed once per call (again after a 401
//     refresh, which XSAPI sends as a new call);
//   - a Retry-After on a retryable status is cached per key; until it passes
//     one call may hold for it (if it falls inside that call's window) and
//     every other call fails at once with the cached status; when the call
//     that got it will itself retry, it is that one call, so no second call
//     fires at the same instant (libHttpClient PR #511);
//   - a 401 is refreshed (RefreshToken) and retried once, only for a call that
//     may be retried: a call sent once is never sent twice.
//
// # Where it differs, on purpose
//
//	XSAPI / libHttpClient                    this transport                             why
//	---------------------                    --------------                             ---
//	Retry-After cache per API, process-wide  per Transport, keyed user + title +       the service counts per user + title +
//	                                         service scope (or read/write class)        service: one user's 429 must not block
//	                                                                                    every other local user
//	only reacts to 429s                      keeps a local burst/sustain budget too     avoiding 429s beats recovering from
//	                                         (DisableBudget: off, exactly XSAPI)        them: throttled requests still count
//	Retry-After: integer seconds             also an HTTP-date; capped at 10 minutes    HTTP allows both; a huge value must not
//	                                                                                    block a key for days
//	a new Retry-After overwrites the entry   the later deadline wins                    an earlier answer must not shorten a
//	                                                                                    wait the service asked for
//	fail-fast check once, when a call starts before every attempt, retries included   a retry must not fire inside another
//	                                                                                    call's fresh Retry-After
//	no retry without a body it can resend    a body without GetBody is sent once        the same, said plainly: Go bodies are
//	                                                                                    streams and cannot be replayed
//	window 0: no retries                     RetryWindow < 0: no retries, no budget     Go's zero value must be useful, so 0
//	                                         waits, 5 s per attempt; 0 is the default   means the 20 s default
//	DNS "name not found" retried (E_FAIL)    fails at once, as do certificates that     no retry can make a name exist or a
//	                                         do not verify and unsupported schemes      certificate verify within 20 s
//	timeout covers the whole response        covers the headers and the transport's     a Go caller may stream a large 200 body
//	                                         own reads; a 200 body is the caller's      at its own pace
//	(no local budget)                        a call the service answered 401, or an    the service counts a call against the
//	                                         attempt never sent (its body or Signer     user its token names: an expired or
//	                                         failed), gives its budget slot back        made-up token names no one, so a forged
//	                                                                                    token with another user's userhash
//	                                                                                    spends nothing of theirs
//	a 429 body's limits are not used         maxRequests / periodInSeconds replace the  the service knows its limits; a host
//	                                         data's limit: for the key that saw it,     missing from the data, or a table that
//	                                         then, confirmed by another user or window, drifted, would collect a 429 per window;
//	                                         for the scope (shared through the store);  one body may be one key's fault, so
//	                                         between a tenth of the data's limit and    one key's report never moves the rest,
//	                                         MaxLearnedLimit; for two sustain windows   and a report lasts only while 429s
//	                                         after the last report                      confirm it
//
// # Time
//
// The transport reads time.Now and waits on runtime timers, including in
// Snapshot; tests run it inside testing/synctest, which makes both virtual.
// That is its one seam for users. (Internally, the xblcall simulator
// substitutes its own virtual clock through the request's context; the key
// is unexported.) It never sleeps past the request's context deadline.
//
// One Policy says how a call is treated, Transport.Policy by default and
// WithPolicy per call, field by field: MaxWait (wait for the budget or a
// Retry-After past the 20 s window, up to 300 s), FailFast (never wait:
// refused locally at once, no retries), NoRetry (sent once, as XSAPI sends
// calls that are not idempotent), AttemptTimeout (LongCallTimeout is
// XSAPI's long 5-minute one), Priority (a Background call never takes the
// share of the key's limits kept for interactive calls,
// Transport.InteractiveShare, a quarter by default, and never queues ahead
// of them), Rule (count against a named rule) and BoundBody; PolicyOf reads
// a context's back as one comparable value, for code that merges calls. After a call,
// BudgetLeft says what is left of its key's budget; a Ticker paces a
// periodic call by it. A 429's body teaches the transport the service's
// limit (MaxLearnedLimit, LearnedLimits); LimitShare keeps every window
// within a share of its limits (0.9: clear of the trace analyzer's
// warnings). CoalesceReads (with an optional ReadCacheTTL) makes identical
// GETs with the same credentials share one request.
package transport
