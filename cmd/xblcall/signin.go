package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"
	"golang.org/x/oauth2"

	"github.com/xblgo/fgrl/client"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/smallfile"
)

const signInHelp = `
Sign-in uses a Microsoft account application you register (once): in the
Azure portal, App registrations, New registration, "Personal Microsoft
accounts only"; under Authentication, "Allow public client flows": Yes.
Its Application (client) ID is --client-id (or XBL_CLIENT_ID). For
--browser, also add the platform "Mobile and desktop applications" with the
redirect URI http://localhost.

The tokens are stored in the user's config directory (fgrl/signin.json,
mode 0600) and never printed. 'xblcall call' uses them when no --token,
--mock or XBL_TOKEN is given, renewing them as they expire. A command that
writes or removes them (login, logout, a renewal) holds the file
fgrl/signin.json.lock meanwhile; one left by a command killed holding it
is broken after 30 s.

--via ADDR sends every request to a mock at that loopback address (xblcall
mock) with the real host names in the Host header: the whole sign-in runs
offline, and the stored sign-in remembers the address for 'call'.
`

func loginCommand(e *env) *cobra.Command {
	o := new(loginOpts)
	c := &cobra.Command{
		Use:   "login",
		Short: "sign in to Xbox services with a Microsoft account (device code)",
		Example: "  xblcall login --client-id 00000000-0000-0000-0000-000000000000\n  xblcall mock --addr 127.0.0.1:8080 &  xblcall login --via http://127.0.0.1:8080\n" +
			"  xblcall login --service --cert partner.pem --key partner.key --sandbox XDKS.1\n" + signInHelp + serviceSignInHelp,
		RunE: runE(e, o.run),
	}
	c.Flags().AddFlagSet(loginFlags(o))
	return c
}

func logoutCommand(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:     "logout",
		Short:   "forget the stored sign-in",
		Example: "  xblcall logout\n",
		RunE: runE(e, func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return &exitError{2, errors.New("logout takes no arguments")}
			}
			if err := withSignInLock(ctx, e, e.stderr, false, forgetSignIn); err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, "signed out")
			return nil
		}),
	}
	c.Flags().AddFlagSet(newFlagSet("logout"))
	return c
}

func whoamiCommand(e *env) *cobra.Command {
	o := new(whoamiOpts)
	c := &cobra.Command{
		Use:     "whoami",
		Short:   "show who is signed in: XUID, gamertag, token expiry",
		Example: "  xblcall whoami\n  xblcall whoami --json | jq -r .xuid\n",
		RunE:    runE(e, o.run),
	}
	c.Flags().AddFlagSet(whoamiFlags(o))
	return c
}

type loginOpts struct {
	clientID, relyingParty, sandbox, via string
	browser                              bool
	service                              bool
	cert, key, ca                        string
}

func loginFlags(o *loginOpts) *flag.FlagSet {
	fs := newFlagSet("login")
	fs.StringVar(&o.clientID, "client-id", "", "the registered application's client ID (default $XBL_CLIENT_ID)")
	fs.StringVar(&o.relyingParty, "relying-party", client.XboxRelyingParty, "the XSTS relying party (a title's own services have theirs)")
	fs.StringVar(&o.sandbox, "sandbox", "RETAIL", "the XSTS sandbox")
	fs.StringVar(&o.via, "via", "", "send every request to a mock at this loopback address (http://127.0.0.1:PORT; default $"+mockEnv+")")
	fs.BoolVar(&o.browser, "browser", false, "sign in in a browser on this machine (authorization code, loopback redirect) instead of with a device code")
	fs.BoolVar(&o.service, "service", false, "sign in as a game backend: a service with its Business Partner Certificate (--cert, --key)")
	fs.StringVar(&o.cert, "cert", "", "with --service: the Business Partner Certificate (PEM)")
	fs.StringVar(&o.key, "key", "", "with --service: its private key (PEM), readable by its owner only")
	fs.StringVar(&o.ca, "ca", "", "with --service: trust this CA certificate (PEM) besides the system's, such as a mock's (xblcall mock --ca-out)")
	return fs
}

// stored is the sign-in file.
type stored struct {
	ClientID     string        `json:"clientId"`
	RelyingParty string        `json:"relyingParty"`
	Sandbox      string        `json:"sandbox"`
	Via          string        `json:"via,omitempty"`
	Microsoft    *oauth2.Token `json:"microsoft,omitempty"`
	// Service is a service's sign-in (login --service), in place of a
	// Microsoft account's.
	Service *storedService `json:"service,omitempty"`
}

func (o *loginOpts) run(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		return &exitError{2, errors.New("login takes no arguments")}
	}
	var from string
	if o.via, from = mockAddr(e, "--via", o.via, ""); o.via != "" && !o.service {
		if _, err := parseVia(from, o.via); err != nil {
			return err
		}
	}
	if o.service {
		return o.loginService(ctx, e)
	}
	if o.clientID == "" {
		o.clientID = e.getenv("XBL_CLIENT_ID")
	}
	if o.clientID == "" && o.via != "" {
		o.clientID = "fgrl-mock" // the mock takes any client
	}
	if o.clientID == "" {
		return &exitError{2, errors.New("need --client-id or XBL_CLIENT_ID: register an application (see xblcall help login)")}
	}
	hc, err := viaClient(o.via)
	if err != nil {
		return &exitError{2, err}
	}
	cfg := client.MicrosoftOAuth(o.clientID)
	var tok *oauth2.Token
	if o.browser {
		tok, err = client.BrowserLogin(ctx, cfg, hc, func(u string) {
			fmt.Fprintf(e.stderr, "To sign in, open this address in a browser on this machine:\n%s\n", safetext.Clip(u, 2000))
		})
	} else {
		tok, err = client.DeviceLogin(ctx, cfg, hc, func(da *oauth2.DeviceAuthResponse) {
			fmt.Fprintf(e.stderr, "To sign in, open %s and enter the code %s (waiting up to %v)\n",
				safetext.Clip(da.VerificationURI, 200), safetext.Clip(da.UserCode, 40), time.Until(da.Expiry).Round(time.Second))
		})
	}
	if err != nil {
		return err
	}
	st := &stored{ClientID: o.clientID, RelyingParty: o.relyingParty, Sandbox: o.sandbox, Via: o.via, Microsoft: tok}
	s := st.signIn(ctx, e, hc, e.stderr)
	x, err := s.XboxToken(ctx)
	if err != nil {
		return err
	}
	st.Microsoft = s.MicrosoftToken()
	if err := st.save(ctx, e); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "signed in as %s (XUID %s); token valid until %s\n", safetext.Clip(x.Gamertag, 40),
		safetext.Clip(x.XUID, 40), x.NotAfter.UTC().Format(time.RFC3339))
	return nil
}

// signIn returns the stored sign-in's token source, saving each refreshed
// Microsoft token while the sign-in stored is still this one: a command
// that ran across a logout, or a login since, does not bring its own back.
// A save waits for the sign-in's lock no longer than ctx, the command's,
// and tells w when it waits.
func (st *stored) signIn(ctx context.Context, e *env, hc *http.Client, w io.Writer) *client.SignIn {
	s := &client.SignIn{OAuth: client.MicrosoftOAuth(st.ClientID), Microsoft: st.Microsoft}
	s.HTTPClient, s.RelyingParty, s.Sandbox = hc, st.RelyingParty, st.Sandbox
	var mu sync.Mutex
	s.OnRefresh = func(t *oauth2.Token) {
		mu.Lock()
		defer mu.Unlock()
		prev := st.Microsoft
		st.Microsoft = t
		// Best effort: the next run refreshes again if this fails. The
		// check and the write hold the sign-in's lock, so that a logout
		// or a login cannot come between them.
		withSignInLock(ctx, e, w, false, func(p string) error {
			if cur, err := loadSignIn(e); err != nil || !cur.same(st, prev) {
				return nil
			}
			signInChecked()
			return st.writeTo(p)
		})
	}
	return s
}

// same reports whether cur, the sign-in stored now, is st's, whose
// Microsoft token was prev until a refresh: the same account's sign-in,
// made at the same place, with the same refresh token.
func (cur *stored) same(st *stored, prev *oauth2.Token) bool {
	return cur.sameAccount(st) && cur.Microsoft != nil && prev != nil && cur.Microsoft.RefreshToken == prev.RefreshToken
}

// signInPath is where the sign-in is stored: in e's config directory.
func signInPath(e *env) (string, error) {
	dir, err := e.configDir()
	if err != nil {
		return "", fmt.Errorf("no config directory for the sign-in: %w", err)
	}
	return filepath.Join(dir, "fgrl", "signin.json"), nil
}

// save writes the sign-in, readable by its owner only, holding its lock
// (a wait for it told on e's stderr).
func (st *stored) save(ctx context.Context, e *env) error {
	return withSignInLock(ctx, e, e.stderr, true, st.writeTo)
}

// signInChecked is called by a refresh between its check of the stored
// sign-in and its write (tests hold it there).
var signInChecked = func() {}

// Waiting for the sign-in's lock: at most lockWait, and said after
// lockNotice (both lowered by tests); a lock older than staleLock was left
// by a command killed holding it, and is broken.
var lockWait, lockNotice = 10 * time.Second, time.Second

const staleLock = 30 * time.Second

// maxPath bounds a path quoted whole (Linux's PATH_MAX): the lock's path
// is the user's own, and a message telling them to remove it must name all
// of it, its end above all.
const maxPath = 4096

// withSignInLock runs fn with the path p of e's stored sign-in while holding
// its lock: a file beside it (p + ".lock", made with O_EXCL) that every
// command writing or removing the sign-in holds while it checks and
// writes, so that a refresh's check and write, a login's write and a
// logout's removal never interleave. create makes the directory; without
// it, a directory that does not exist holds no sign-in to guard and fn
// runs without the lock. The wait ends with ctx (its error, fn not run),
// or after lockWait with an error naming the lock; once it has lasted
// lockNotice, a line to w (when not nil) says what it waits for.
func withSignInLock(ctx context.Context, e *env, w io.Writer, create bool, fn func(p string) error) error {
	p, err := signInPath(e)
	if err != nil {
		return err
	}
	if create {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
	}
	lock := p + ".lock"
	start := time.Now()
	told := w == nil
	for deadline := start.Add(lockWait); ; {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := makeLock(lock)
		if err == nil {
			defer os.Remove(lock)
			break
		}
		if errors.Is(err, fs.ErrNotExist) && !create {
			return fn(p)
		}
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		switch broke, err := breakStaleLock(lock); {
		case err != nil:
			return err
		case broke:
			continue
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the stored sign-in is locked by another xblcall (%s, for more than %v): try again, or remove that file if no xblcall runs", safetext.Quote(lock, maxPath), lockWait)
		}
		if !told && time.Since(start) >= lockNotice {
			told = true
			fmt.Fprintf(w, "xblcall: waiting for another xblcall to release the stored sign-in's lock (%s), at most %v\n", safetext.Quote(lock, maxPath), lockWait)
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return fn(p)
}

// makeLock makes the lock file p, failing (fs.ErrExist) if it is there.
func makeLock(p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	return nil
}

// breakStaleLock removes lock if it is stale (older than staleLock: left
// by a command killed holding it), and reports whether it did. Two
// commands finding the same stale lock must not both break it, or the
// slower would remove the lock the faster has made since: the break holds
// a lock of its own (lock + ".break", made with O_EXCL) and looks at the
// lock's age again under it. A lock that cannot be removed is an error
// naming it.
func breakStaleLock(lock string) (bool, error) {
	if fi, err := os.Lstat(lock); err != nil || time.Since(fi.ModTime()) <= staleLock {
		return false, nil
	}
	brk := lock + ".break"
	if err := makeLock(brk); err != nil {
		// Another command is breaking it; a break left by one killed
		// while breaking is itself stale, and removed.
		if fi, serr := os.Lstat(brk); serr == nil && time.Since(fi.ModTime()) > staleLock {
			os.Remove(brk)
		}
		return false, nil
	}
	defer os.Remove(brk)
	fi, err := os.Lstat(lock)
	if err != nil || time.Since(fi.ModTime()) <= staleLock {
		return false, nil // broken meanwhile, or a fresh one made since
	}
	if err := os.Remove(lock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("the stored sign-in's lock %s is stale (a command killed holding it) and cannot be removed: %w; remove it if no xblcall runs", safetext.Quote(lock, maxPath), err)
	}
	return true, nil
}

// writeTo writes the sign-in to p (through a link, to the file it names),
// readable by its owner only.
func (st *stored) writeTo(p string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if target, _ := linkedSignIn(p); target != "" { // the link stays, naming the file it keeps the sign-in in
		p = target
	}
	return writePrivate(p, b)
}

// writePrivate replaces the file p with b, readable by its owner only.
func writePrivate(p string, b []byte) error { return writeFileAtomic(p, b, 0o600) }

// writeFileAtomic replaces the file p with b, with mode perm: b goes to a
// new temporary file beside p (a unique name, created 0600, so no leftover
// file's mode carries over), which then takes p's place.
func writeFileAtomic(p string, b []byte, perm os.FileMode) error {
	return writeFileAtomicIf(p, b, perm, nil)
}

// writeFileAtomicIf is writeFileAtomic, where ok (when not nil), called
// once the new file is written and synced, may still refuse to put it in
// place (an interrupt): its error is returned and p is left as it was.
func writeFileAtomicIf(p string, b []byte, perm os.FileMode, ok func() error) error {
	if err := replaceable(p); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // once renamed, there is nothing to remove
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := replaceable(p); err != nil { // again: p may have changed meanwhile
		return err
	}
	if ok != nil {
		if err := ok(); err != nil {
			return err
		}
	}
	return os.Rename(f.Name(), p)
}

// replaceable says why p may not be replaced by renaming over it: only a
// regular file, or a link to one (or to nothing yet), is. Renaming over a
// device (/dev/null, as root), a FIFO or a directory would replace it, not
// write to it; so would renaming over a link to one (/dev/stdout links to
// the process's descriptor), replacing the link.
func replaceable(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil // nothing there yet (or the rename will say why not)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if fi, err = os.Stat(p); err != nil {
			return nil // a dangling link: nothing it names is replaced
		}
	}
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "write", Path: p, Err: fmt.Errorf("not a regular file (%v)", fi.Mode().Type())}
	}
	return nil
}

// forgetSignIn removes the sign-in stored at p: the file, the file it
// links to when that holds a sign-in (one loadSignIn takes), and what a
// save killed before its rename left beside it (writeFileAtomic's
// temporary files: regular files named .signin.json.*), each of which
// holds the tokens.
func forgetSignIn(p string) error {
	if target, mine := linkedSignIn(p); target != "" {
		if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// A save through the link makes its temporary file beside the file
		// the link names: there, only those os.CreateTemp named (a decimal
		// suffix) holding this account's sign-in are ours.
		if err := removeLeftovers(target, mine); err != nil {
			return err
		}
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return removeLeftovers(p, nil)
}

// removeLeftovers removes the regular files beside p named as
// writeFileAtomic names its temporary files for p; with of set, only those
// os.CreateTemp named that hold of's account's sign-in.
func removeLeftovers(p string, of *stored) error {
	dir, prefix := filepath.Dir(p), "."+filepath.Base(p)+"."
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		f := filepath.Join(dir, e.Name())
		if of != nil {
			suffix := strings.TrimPrefix(e.Name(), prefix)
			if suffix == "" || strings.Trim(suffix, "0123456789") != "" {
				continue
			}
			b, _, err := smallfile.Read(f, maxSignIn)
			if err != nil {
				continue
			}
			if st, err := parseSignIn(b); err != nil || !st.sameAccount(of) {
				continue
			}
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// sameAccount reports whether st and o are sign-ins of one account at one
// place: one client and via (a Microsoft account's; its tokens change with
// each refresh), or one partner certificate (a service's).
func (st *stored) sameAccount(o *stored) bool {
	if st.Service != nil || o.Service != nil {
		return st.Service != nil && o.Service != nil && st.Service.Cert == o.Service.Cert && st.Via == o.Via
	}
	return st.ClientID == o.ClientID && st.Via == o.Via
}

// linkedSignIn returns the file the link p names and the sign-in in it,
// when p is a link and that file holds one loadSignIn takes (a dotfiles
// manager's link to the sign-in it keeps); "" otherwise.
func linkedSignIn(p string) (string, *stored) {
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", nil
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", nil
	}
	b, _, err := smallfile.Read(target, maxSignIn)
	if err != nil {
		return "", nil
	}
	st, err := parseSignIn(b)
	if err != nil {
		return "", nil
	}
	return target, st
}

// errNotSignedIn is loadSignIn's error when there is no stored sign-in.
var errNotSignedIn = errors.New("not signed in (xblcall login)")

// loadSignIn reads the sign-in stored in e's config directory.
func loadSignIn(e *env) (*stored, error) {
	p, err := signInPath(e)
	if err != nil {
		return nil, err
	}
	b, _, err := smallfile.Read(p, maxSignIn)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNotSignedIn
	}
	if err != nil {
		return nil, fmt.Errorf("the stored sign-in %s: %w", safetext.Quote(p, 200), err)
	}
	st, err := parseSignIn(b)
	if err != nil {
		return nil, fmt.Errorf("the stored sign-in %s is damaged; run xblcall login again", p)
	}
	return st, nil
}

// maxSignIn bounds a stored sign-in's file (a few KiB: its tokens, a
// service's certificate and key).
const maxSignIn = 1 << 20

// parseSignIn reads a stored sign-in: a Microsoft account's (its client
// and token) or a service's (its certificate and key).
func parseSignIn(b []byte) (*stored, error) {
	var st stored
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, err
	}
	if (st.Microsoft == nil || st.ClientID == "") && (st.Service == nil || st.Service.Cert == "" || st.Service.Key == "") {
		return nil, errors.New("no sign-in")
	}
	return &st, nil
}

type whoamiOpts struct{ json bool }

func whoamiFlags(o *whoamiOpts) *flag.FlagSet {
	fs := newFlagSet("whoami")
	fs.BoolVar(&o.json, "json", false, "print as JSON")
	return fs
}

func (o *whoamiOpts) run(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		return &exitError{2, errors.New("whoami takes no arguments")}
	}
	st, err := loadSignIn(e)
	if err != nil {
		return err
	}
	if st.Service != nil {
		return o.whoamiService(ctx, e, st)
	}
	hc, err := viaClient(st.Via)
	if err != nil {
		return err
	}
	x, err := st.signIn(ctx, e, hc, e.stderr).XboxToken(ctx)
	if err != nil {
		return err
	}
	if o.json {
		return json.NewEncoder(e.stdout).Encode(map[string]string{"xuid": x.XUID, "gamertag": x.Gamertag,
			"userhash": x.UserHash, "notAfter": x.NotAfter.UTC().Format(time.RFC3339)})
	}
	fmt.Fprintf(e.stdout, "%s (XUID %s), token valid until %s\n", safetext.Clip(x.Gamertag, 40), safetext.Clip(x.XUID, 40),
		x.NotAfter.UTC().Format(time.RFC3339))
	return nil
}

// viaClient returns the HTTP client sign-in uses: the default one, or one
// sending every request to the loopback address via.
func viaClient(via string) (*http.Client, error) {
	if via == "" {
		return http.DefaultClient, nil
	}
	rt, err := viaTransport(via, http.DefaultTransport)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: rt}, nil
}

// viaTransport returns a RoundTripper that sends each request to the
// loopback address via, the request's own host kept in the Host header, as
// a mock in another process takes it.
func viaTransport(via string, base http.RoundTripper) (http.RoundTripper, error) {
	u, err := parseVia("--via", via)
	if err != nil {
		return nil, err
	}
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		r := req.Clone(req.Context())
		if r.Host == "" {
			r.Host = req.URL.Host
		}
		r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
		return base.RoundTrip(r)
	}), nil
}

// parseVia checks a --via address (or what names it: what): http(s) to a
// loopback host.
func parseVia(what, via string) (*url.URL, error) {
	u, err := checkURL(what, via)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, &exitError{2, fmt.Errorf("%s \"%s\": only a loopback address (a mock on this machine)", what, shownURL(via))}
	}
	return u, nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
