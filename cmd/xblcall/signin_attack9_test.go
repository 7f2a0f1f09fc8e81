package main

// An outside attack (attack9112) on the stored sign-in as xblcall keeps it:
// login, whoami, logout and the commands that read it (call, watch).

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// attack9Login signs in with xblcall login --via url and returns the stored
// sign-in's path and what it holds.
func attack9Login(t *testing.T, url string) (string, stored) {
	t.Helper()
	setenv(t, "XBL_TOKEN", "")
	setenv(t, "XBL_CLIENT_ID", "")
	setenv(t, "XBLCALL_MOCK", "")
	if code, out, errs := xblcall(t, "login", "--via", url); code != 0 {
		t.Fatalf("login: exit %d\n%s%s", code, out, errs)
	}
	return attack9Stored(t)
}

// attack9Stored reads the stored sign-in.
func attack9Stored(t *testing.T) (string, stored) {
	t.Helper()
	p := filepath.Join(configDirOf(t), "fgrl", "signin.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var st stored
	if err := json.Unmarshal(b, &st); err != nil || st.Microsoft == nil || st.Microsoft.RefreshToken == "" {
		t.Fatalf("stored: %v %s", err, b)
	}
	return p, st
}

// attack9Expire rewrites the stored sign-in with its Microsoft access token
// expired, so that the next command refreshes it (and, with a new token,
// saves the sign-in again: stored.signIn's OnRefresh).
func attack9Expire(t *testing.T, p string, st stored) {
	t.Helper()
	st.Microsoft.Expiry = time.Now().Add(-time.Minute)
	b, _ := json.Marshal(st)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// attack9Gated serves h, holding each Microsoft token request (the refresh)
// while a gate is set; arrived gets a value when one is held.
type attack9Gated struct {
	h       http.Handler
	mu      sync.Mutex
	gate    chan struct{}
	arrived chan struct{}
}

func (g *attack9Gated) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/oauth2/v2.0/token") {
		g.mu.Lock()
		gate := g.gate
		g.mu.Unlock()
		if gate != nil {
			g.arrived <- struct{}{}
			<-gate
		}
	}
	g.h.ServeHTTP(w, r)
}

// hold makes the next token requests wait; the returned func lets them go.
func (g *attack9Gated) hold() func() {
	gate := make(chan struct{})
	g.mu.Lock()
	g.gate = gate
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.gate = nil
			g.mu.Unlock()
			close(gate)
		})
	}
}

// TestAttack9WatchMockSignInStaysAtMock: README.md:154-156 "The stored token
// is sent only to `xboxlive.com` hosts, and a stored sign-in's tokens are
// renewed only where it was made"; call.go storedToken: "A sign-in's
// tokens go only where it was made: the real services' to them, a mock's
// to that mock"; and xblcall help login: "--via ADDR sends every request
// to a mock at that loopback address ... the whole sign-in runs offline,
// and the stored sign-in remembers the address". A sign-in made against a
// mock (login --via), then `xblcall watch presence XUID` with no --via
// (watch's help: "else the stored sign-in (xblcall login)"): watch signs
// in at the mock, then opens the websocket with the mock's XSTS token to
// the real wss://rta.xboxlive.com (watch.go config: the stored sign-in's
// Via is used for the sign-in only, cfg.Transport and the RTA endpoint
// stay the real ones). It should watch at the mock where the sign-in was
// made, or refuse (exit 2), never carry that sign-in's token off the
// machine.
func TestAttack9WatchMockSignInStaysAtMock(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	h := mock.NewHandler()
	var rta atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "rta.xboxlive.com" || strings.HasPrefix(r.URL.Path, "/connect") {
			rta.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	attack9Login(t, srv.URL)
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := run(ctx, []string{"watch", "presence", "2533274791234567", "--for", "3s", "--events", "1"}, &out, &errb, withTestEnv(t))
	all := out.String() + errb.String()
	if strings.Contains(all, "rta.xboxlive.com/connect") && !strings.Contains(all, srv.Listener.Addr().String()) {
		t.Errorf("watch with a sign-in made at the mock %s went to the real RTA service (the mock saw %d RTA connections); exit %d:\n%s",
			srv.URL, rta.Load(), code, all)
	}
	if code != 2 && rta.Load() == 0 {
		t.Errorf("watch neither refused (exit %d) nor watched at the mock where the sign-in was made", code)
	}
}

// TestAttack9LogoutNotUndoneByARunningCommand: README.md:135-136 "`whoami`
// shows the XUID, gamertag and expiry, `logout` forgets them", xblcall help
// logout: "forget the stored sign-in". A command already running (a
// whoami, a long `call -n` or `watch`) read the stored sign-in before
// logout and refreshes the Microsoft token after it: stored.signIn's
// OnRefresh saves the whole sign-in it read at start, so the file logout
// removed is written back, refresh token and all, and the next command is
// signed in again. A refresh should update the sign-in only if it is still
// the one stored (none after logout).
func TestAttack9LogoutNotUndoneByARunningCommand(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	g := &attack9Gated{h: mock.NewHandler(), arrived: make(chan struct{}, 1)}
	srv := httptest.NewServer(g)
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	attack9Expire(t, p, st)
	release := g.hold()
	defer release()
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() { done <- run(context.Background(), []string{"whoami"}, &out, &errb, withTestEnv(t)) }()
	<-g.arrived // whoami has read the sign-in and is refreshing
	if code, lout, lerr := xblcall(t, "logout"); code != 0 || !strings.Contains(lout, "signed out") {
		t.Fatalf("logout: exit %d %s%s", code, lout, lerr)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("after logout: %v", err)
	}
	time.Sleep(1100 * time.Millisecond) // the mock's tokens name their second: the refresh gives new ones
	release()
	if code := <-done; code != 0 {
		t.Logf("whoami (running before logout): exit %d %s", code, errb.String())
	}
	if b, err := os.ReadFile(p); err == nil {
		t.Errorf("logout said \"signed out\", then a command that was running wrote the sign-in back (%d bytes, refresh token included: %v)",
			len(b), strings.Contains(string(b), "refresh_token"))
	}
	if code, wout, _ := xblcall(t, "whoami"); code == 0 {
		t.Errorf("after logout, whoami: exit 0 %q", wout)
	}
}

// TestAttack9NewerLoginNotOverwrittenByARunningCommand: README.md:132-136
// "`login` signs a Microsoft account in ... and stores them"; xblcall help
// login "The tokens are stored in the user's config directory
// (fgrl/signin.json ...)". Two sign-ins, the second while a command of the
// first is running: user A is stored, a command reads A's sign-in, the
// user signs in as B (another mock, another account), then A's command
// refreshes its Microsoft token and saves A's whole sign-in over B's. The
// sign-in the user made last should stay stored.
func TestAttack9NewerLoginNotOverwrittenByARunningCommand(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	g := &attack9Gated{h: mock.NewHandler(), arrived: make(chan struct{}, 1)}
	srvA := httptest.NewServer(g)
	defer srvA.Close()
	srvB := httptest.NewServer(mock.Must(mock.New(mock.Config{Account: &mock.Account{XUID: "2533274790000042", Gamertag: "PlayerB"}})))
	defer srvB.Close()
	p, st := attack9Login(t, srvA.URL)
	attack9Expire(t, p, st)
	release := g.hold()
	defer release()
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() { done <- run(context.Background(), []string{"whoami"}, &out, &errb, withTestEnv(t)) }()
	<-g.arrived
	if code, lout, lerr := xblcall(t, "login", "--via", srvB.URL); code != 0 || !strings.Contains(lout, "PlayerB") {
		t.Fatalf("login as B: exit %d %s%s", code, lout, lerr)
	}
	time.Sleep(1100 * time.Millisecond)
	release()
	<-done
	if _, now := attack9Stored(t); now.Via != srvB.URL {
		t.Errorf("the sign-in made last (B, at %s) was replaced by A's (at %s), which a command running since before saved on refreshing", srvB.URL, now.Via)
	}
	if code, wout, _ := xblcall(t, "whoami"); !strings.Contains(wout, "PlayerB") {
		t.Errorf("whoami after signing in as B: exit %d %q", code, wout)
	}
}

// TestAttack9LogoutForgetsACrashedWrite: README.md:135-136 "stores them (0600,
// in the user's config directory; never printed); ... `logout` forgets
// them"; xblcall help logout "forget the stored sign-in". Each save writes
// the whole sign-in to a temporary file beside it (writeFileAtomic:
// os.CreateTemp(dir, ".signin.json.*")) and renames it; a process killed
// between the two (kill -9, a crash, a power cut during the Sync) leaves
// that file, refresh token and all, as nothing removes it then (the
// deferred Remove does not run). logout removes signin.json only: the
// refresh token stays on disk after "signed out".
func TestAttack9LogoutForgetsACrashedWrite(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	b, _ := os.ReadFile(p)
	// What a save killed before its rename leaves: CreateTemp's name, 0600.
	leftover := filepath.Join(filepath.Dir(p), ".signin.json.2750183916")
	if err := os.WriteFile(leftover, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := xblcall(t, "logout"); code != 0 || !strings.Contains(out, "signed out") {
		t.Fatalf("logout: exit %d %s%s", code, out, errs)
	}
	filepath.WalkDir(filepath.Dir(p), func(f string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if c, _ := os.ReadFile(f); strings.Contains(string(c), st.Microsoft.RefreshToken) {
				t.Errorf("after logout, %s still holds the refresh token", filepath.Base(f))
			}
		}
		return nil
	})
}

// TestAttack9LogoutThroughASymlink: README.md:136 "`logout` forgets them";
// xblcall help logout "forget the stored sign-in". signin.json a symbolic
// link to the file holding the sign-in (a dotfiles manager's link, or one
// writeFileAtomic's own comment allows: "only a regular file, or a link to
// one ... is" replaced): whoami and call sign in from the file the link
// names; logout removes the link only, says "signed out" and exits 0,
// and the refresh token stays in the file. logout should remove the
// sign-in it was using, or say that it did not.
func TestAttack9LogoutThroughASymlink(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	real := filepath.Join(t.TempDir(), "signin.json")
	if err := os.Rename(p, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, p); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := xblcall(t, "whoami"); code != 0 || !strings.Contains(out, "MockPlayer") {
		t.Fatalf("whoami through the link: exit %d %s%s", code, out, errs)
	}
	code, out, errs := xblcall(t, "logout")
	b, _ := os.ReadFile(real)
	if code == 0 && strings.Contains(out, "signed out") && strings.Contains(string(b), st.Microsoft.RefreshToken) {
		t.Errorf("logout: exit 0 %q, but the sign-in whoami used (the file signin.json linked to) still holds the refresh token%s",
			strings.TrimSpace(out), errs)
	}
}

// held: xblcall help login "The tokens are stored ... and never printed";
// README.md:135. A service whose XSTS answer names a hostile gamertag and
// XUID (an escape sequence that retitles the terminal, a bidi override,
// a newline): login and whoami print them escaped (safetext.Clip), whoami
// --json as JSON escapes (bidi characters pass there, as RELIABILITY.md
// "Seen and left" says of proxy --status --json: machine output); no
// token reaches stdout or stderr.
func TestAttack9HeldHostileNamesEscaped(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	h := mock.NewHandler()
	const evil = "\x1b]0;pwned\x07Ev\u202eil\nsigned in as Admin"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "xsts.auth.xboxlive.com" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var a map[string]any
		if json.Unmarshal(rec.Body.Bytes(), &a) == nil {
			if dc, ok := a["DisplayClaims"].(map[string]any); ok {
				if xui, ok := dc["xui"].([]any); ok && len(xui) > 0 {
					xui[0].(map[string]any)["gtg"] = evil
					xui[0].(map[string]any)["xid"] = "2533274791234567\x1b[2J"
				}
			}
		}
		b, _ := json.Marshal(a)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rec.Code)
		w.Write(b)
	}))
	defer srv.Close()
	setenv(t, "XBL_TOKEN", "")
	setenv(t, "XBLCALL_MOCK", "")
	code, out, errs := xblcall(t, "login", "--via", srv.URL)
	if code != 0 {
		t.Fatalf("login: exit %d %s%s", code, out, errs)
	}
	_, st := attack9Stored(t)
	wc, wout, werrs := xblcall(t, "whoami")
	jc, jout, jerrs := xblcall(t, "whoami", "--json")
	for i, s := range []string{out, errs, wout, werrs, jout, jerrs} {
		raw := "\x1b\x07\u202e"
		if i >= 4 {
			raw = "\x1b\x07"
		}
		if strings.ContainsAny(s, raw) || strings.Count(s, "\n") > 1 {
			t.Errorf("a hostile name printed raw: %q", s)
		}
		if strings.Contains(s, st.Microsoft.RefreshToken) || strings.Contains(s, st.Microsoft.AccessToken) || strings.Contains(s, "XBL3.0") {
			t.Errorf("a token printed: %q", s)
		}
	}
	var who map[string]string
	if wc != 0 || jc != 0 || json.Unmarshal([]byte(jout), &who) != nil || who["gamertag"] != evil {
		t.Errorf("whoami: exit %d %q; --json exit %d %q", wc, wout, jc, jout)
	}
}

// held: RELIABILITY.md:1528 (a secret echoed by the token endpoint is
// scrubbed from SignInError); xblcall help login "never printed". The
// stored refresh token refused (invalid_grant) by a token endpoint that
// echoes the whole posted form, upper-cased too: whoami and call fail,
// exit 1, without the refresh or access token on stdout or stderr, and
// the stored sign-in is left as it was (0600).
func TestAttack9HeldRefusedRenewalEchoesNoSecret(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	h := mock.NewHandler()
	var refuse atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() && strings.HasSuffix(r.URL.Path, "/oauth2/v2.0/token") {
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant " + string(b),
				"error_description": "refused: " + string(b) + " " + strings.ToUpper(string(b))})
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	attack9Expire(t, p, st)
	before, _ := os.ReadFile(p)
	refuse.Store(true)
	for _, args := range [][]string{{"whoami"}, {"whoami", "--json"}, {"call", "-v", "https://profile.xboxlive.com/users/me/profile/settings"}} {
		code, out, errs := xblcall(t, args...)
		if code == 0 {
			t.Errorf("%v with a refused refresh: exit 0", args)
		}
		for _, s := range []string{out, errs} {
			for _, secret := range []string{st.Microsoft.RefreshToken, st.Microsoft.AccessToken} {
				if strings.Contains(strings.ToLower(s), strings.ToLower(secret)) {
					t.Errorf("%v printed a stored token: %q", args, s)
				}
			}
		}
	}
	after, _ := os.ReadFile(p)
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 || !bytes.Equal(before, after) {
		t.Errorf("the stored sign-in changed after a refused refresh: %v %v", fi, err)
	}
}

// held: RELIABILITY.md:356 "written through a fresh temp file (unique
// name, 0600), then renamed". A crash mid-write leaves a half file beside
// the sign-in, never in its place: the old sign-in is still read, the next
// save does not pick the leftover up, and a damaged signin.json (a torn
// file) is refused without printing what it holds.
func TestAttack9HeldCrashMidWriteKeepsOldSignIn(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p, st := attack9Login(t, srv.URL)
	b, _ := os.ReadFile(p)
	half := filepath.Join(filepath.Dir(p), ".signin.json.123456")
	os.WriteFile(half, b[:len(b)/2], 0o644)
	if code, out, errs := xblcall(t, "whoami"); code != 0 || !strings.Contains(out, "MockPlayer") {
		t.Errorf("whoami beside a half-written temp file: exit %d %s%s", code, out, errs)
	}
	attack9Expire(t, p, st)
	time.Sleep(1100 * time.Millisecond) // a refresh gives new tokens, saved
	if code, out, errs := xblcall(t, "whoami"); code != 0 {
		t.Errorf("whoami: exit %d %s%s", code, out, errs)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("saved sign-in: %v %v", fi, err)
	}
	if _, now := attack9Stored(t); now.Microsoft.RefreshToken == st.Microsoft.RefreshToken {
		t.Logf("the refresh kept the refresh token (the mock's may not rotate)")
	}
	torn, _ := os.ReadFile(p)
	os.WriteFile(p, torn[:len(torn)*2/3], 0o600)
	code, out, errs := xblcall(t, "whoami")
	if code == 0 || !strings.Contains(errs, "damaged") || strings.Contains(out+errs, "rt-") || strings.Contains(out+errs, "ac.") {
		t.Errorf("a torn signin.json: exit %d %q %q", code, out, errs)
	}
}

// held: RELIABILITY.md:356 (a fresh temp file, renamed) and signin.go
// replaceable ("Renaming over a device ..., a FIFO or a directory would
// replace it"). A symlink planted at signin.json naming another file (one
// of the user's, not a sign-in): login replaces the link, never writes the
// tokens through it into that file; planted at a directory, login refuses
// and leaves it.
func TestAttack9HeldLoginDoesNotWriteThroughALink(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	srv := httptest.NewServer(mock.NewHandler())
	defer srv.Close()
	p := filepath.Join(configDirOf(t), "fgrl", "signin.json")
	os.MkdirAll(filepath.Dir(p), 0o700)
	victim := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(victim, []byte("my notes\n"), 0o644)
	os.Symlink(victim, p)
	_, st := attack9Login(t, srv.URL)
	if b, _ := os.ReadFile(victim); string(b) != "my notes\n" {
		t.Errorf("login wrote through the link into %s: %q", victim, b)
	}
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("signin.json after login over a link: %v %v", fi, err)
	}
	_ = st
	os.Remove(p)
	dir := t.TempDir()
	os.Symlink(dir, p)
	if code, _, _ := xblcall(t, "login", "--via", srv.URL); code == 0 {
		t.Errorf("login over a link to a directory: exit 0")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("the directory: %v %v", fi, err)
	}
}

// held: two logins at once (two processes' saves racing) leave one whole
// sign-in, 0600, and no temp file.
func TestAttack9HeldTwoLoginsAtOnce(t *testing.T) {
	t.Parallel()
	setConfigDir(t, t.TempDir())
	setenv(t, "XBL_TOKEN", "")
	setenv(t, "XBL_CLIENT_ID", "")
	setenv(t, "XBLCALL_MOCK", "")
	srvA := httptest.NewServer(mock.NewHandler())
	defer srvA.Close()
	srvB := httptest.NewServer(mock.Must(mock.New(mock.Config{Account: &mock.Account{XUID: "2533274790000042", Gamertag: "PlayerB"}})))
	defer srvB.Close()
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := srvA.URL
			if i%2 == 1 {
				url = srvB.URL
			}
			var out, errb bytes.Buffer
			codes[i] = run(context.Background(), []string{"login", "--via", url}, &out, &errb, withTestEnv(t))
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 0 {
			t.Errorf("login %d: exit %d", i, c)
		}
	}
	p, st := attack9Stored(t)
	if st.Via != srvA.URL && st.Via != srvB.URL {
		t.Errorf("stored: %+v", st)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: %v %v", fi, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("left in the directory: %v", entries)
	}
}
