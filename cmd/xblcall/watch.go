package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/xblgo/fgrl/client"
	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/internal/xblid"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

func watchCommand(e *env) *cobra.Command {
	o := new(watchOpts)
	c := &cobra.Command{
		Use:   "watch presence XUID",
		Short: "watch a user's presence by subscription (Real-Time Activity), not by polling",
		Example: `  xblcall watch presence 2533274799999999                         # the real service, as the stored sign-in
  xblcall watch presence 2533274799999999 --via http://127.0.0.1:8080   # a mock (xblcall mock)
  xblcall watch presence 2533274799999999 --via https://127.0.0.1:8443 --ca-cert ca.pem

One websocket to the Real-Time Activity service (rta.xboxlive.com)
subscribes to the user's device presence and their presence in --title;
the service pushes each change, so watching costs no call a minute. Each
event is a line on standard output (--json: one JSON object a line): the
presence it starts from, sign-ins and sign-outs, titles started and ended,
the connection lost and made again (XSAPI's reconnect and resubscribe). A
user's presence is visible to those who follow them; another's is refused
(access denied).

The token comes from --token; else the XBL_TOKEN variable; else, with
--via, the mock's own for --xuid and --title; else the stored sign-in
(xblcall login), watched where it was made: a sign-in made at a mock
(login --via) watches at that mock. Tokens are never printed: each the
client was given (a renewal's too) is taken out of every line, as call
--help says of a call's outputs. It runs until interrupted
(Ctrl-C), --for has passed, or --events events were printed: exit 0
(Ctrl-C is its usual end once connected; before, 130). It exits 1 when it
ends without the connection ever made (the last error says why, when
there was one), and at once when the service refuses both subscriptions
for good.
`,
		RunE: runE(e, o.run),
	}
	fs := c.Flags()
	fs.StringVar(&o.token, "token", "", "Authorization value (XBL3.0 x=<userhash>;<token>)")
	fs.StringVar(&o.xuid, "xuid", "2533274791234567", "the watching user, for --token, XBL_TOKEN and the token --via mints")
	fs.StringVar(&o.title, "title", "1234567890", "title ID")
	fs.StringVar(&o.via, "via", "", "watch at a mock at this loopback address (http:// or https://)")
	fs.StringVar(&o.caCert, "ca-cert", "", "PEM file of the CA to trust for an https --via (xblcall mock --ca-out)")
	fs.DurationVar(&o.dur, "for", 0, "stop after this long (0: until interrupted)")
	fs.IntVar(&o.events, "events", 0, "stop after this many events (0: no bound)")
	fs.BoolVar(&o.json, "json", false, "print each event as a JSON object")
	complete(c, nil, map[string][]string{"ca-cert": {"pem", "crt"}}, nil)
	return c
}

type watchOpts struct {
	token, xuid, title, via, caCert string
	dur                             time.Duration
	events                          int
	json                            bool
	given                           givenTokens
}

// givenTokens are the tokens watch's client was given (each renewal's
// too), taken out of every line it prints as call's outputs are (call
// --help): a service may echo one in an event's text. Kept in a call's
// record of what it sent (sent), tokens being always kept.
type givenTokens struct {
	rec sent
	tv  client.TokenSource
}

// Token is tv's, recorded.
func (g *givenTokens) Token(ctx context.Context, xuid string) (client.Token, error) {
	tok, err := g.tv.Token(ctx, xuid)
	if tok.Authorization != "" || tok.Signature != "" {
		g.rec.add(xblauth.Secrets{}.HeaderSecrets(http.Header{"Authorization": {tok.Authorization}, "Signature": {tok.Signature}}).Lowered(), nil)
	}
	return tok, err
}

// scrub is s without the tokens given so far.
func (g *givenTokens) scrub(s string) string { return g.rec.secrets().Scrub(s) }

func (o *watchOpts) run(ctx context.Context, e *env, args []string) error {
	if len(args) != 2 || args[0] != "presence" {
		return &exitError{2, errors.New("usage: xblcall watch presence XUID")}
	}
	target := args[1]
	if err := xblid.CheckXUID(target); err != nil {
		return &exitError{2, fmt.Errorf("XUID: %w", err)}
	}
	if err := checkIDs(o.xuid, o.title); err != nil {
		return err
	}
	if o.dur < 0 || o.events < 0 {
		return &exitError{2, errors.New("--for and --events must not be negative")}
	}
	cfg, xuid, err := o.config(ctx, e)
	if err != nil {
		return err
	}
	o.given.tv, cfg.Tokens = cfg.Tokens, &o.given
	c, err := client.New(cfg)
	if err != nil {
		return &exitError{2, err}
	}
	if o.dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.dur)
		defer cancel()
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	rs := []client.Resource{client.PresenceOf(target), client.TitlePresenceOf(target, o.title)}
	ch, err := c.As(xuid).Subscribe(ctx, rs...)
	if err != nil {
		return &exitError{2, err}
	}
	var (
		n         int
		connected bool
		lastErr   error
		refused   = map[string]bool{}
	)
	for ev := range ch {
		o.print(e, ev)
		switch v := ev.(type) {
		case *client.ConnectionState:
			connected = connected || v.Connected
			if v.Err != nil {
				lastErr = v.Err
			}
		case *client.SubscriptionError:
			// Refused for good: when all are, nothing more can come.
			if refused[v.Resource.URI()] = true; len(refused) == len(rs) {
				lastErr = v.Err
				stop()
			}
		}
		if n++; o.events > 0 && n >= o.events {
			stop()
		}
	}
	switch {
	case ctx.Err() != nil && !connected && lastErr != nil:
		return fmt.Errorf("never connected to the Real-Time Activity service: %s", oneLine(lastErr))
	case ctx.Err() != nil && !connected:
		return errors.New("never connected to the Real-Time Activity service")
	case len(refused) == len(rs):
		return fmt.Errorf("every subscription was refused: %s", oneLine(lastErr))
	}
	return nil
}

// config is the client's configuration and the watching user: the token
// as run documents, and with --via every host at the mock.
func (o *watchOpts) config(ctx context.Context, e *env) (client.Config, string, error) {
	cfg := client.Config{TitleID: o.title}
	// The stored sign-in, when no other token is given: a sign-in made at
	// a mock (login --via) watches at that mock, as its tokens go only
	// where it was made.
	var st *stored
	if o.token == "" && e.getenv("XBL_TOKEN") == "" && o.via == "" {
		var err error
		if st, err = loadSignIn(e); errors.Is(err, errNotSignedIn) {
			return cfg, "", &exitError{2, errors.New("no token: use --token, XBL_TOKEN, --via or xblcall login")}
		} else if err != nil {
			return cfg, "", err
		}
		o.via = st.Via
	}
	var rt *http.Transport
	if o.via != "" {
		u, err := parseVia("--via", o.via)
		if err != nil {
			return cfg, "", &exitError{2, err}
		}
		rt = http.DefaultTransport.(*http.Transport).Clone()
		if o.caCert != "" {
			pem, err := readPEMFile(o.caCert)
			pool := x509.NewCertPool()
			if err != nil || !pool.AppendCertsFromPEM(pem) {
				return cfg, "", &exitError{2, fmt.Errorf("--ca-cert: no PEM certificate in %s", safetext.Quote(o.caCert, 200))}
			}
			rt.TLSClientConfig = &tls.Config{RootCAs: pool}
		}
		cfg.RTATransport, cfg.Transport = rt, &transport.Transport{Base: rt, TitleID: o.title}
		if u.Scheme == "https" {
			// Every connection goes to the mock; the URL keeps the real
			// host, the TLS server name the mock's certificate names.
			d := &net.Dialer{}
			rt.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, u.Host)
			}
		} else {
			via, _ := viaTransport(o.via, rt)
			cfg.Transport = &transport.Transport{Base: via, TitleID: o.title}
			cfg.Endpoints = map[string]string{"rta.xboxlive.com": "http://" + u.Host}
		}
	}
	tok, xuid := o.token, o.xuid
	switch {
	case tok != "":
	case e.getenv("XBL_TOKEN") != "":
		tok = e.getenv("XBL_TOKEN")
	case st == nil: // --via with no token: the mock's own
		tok = mock.Token(o.xuid, o.title)
	default:
		hc, err := viaClient(st.Via)
		if err != nil {
			return cfg, "", err
		}
		si := st.signIn(ctx, e, hc, e.stderr)
		x, err := si.XboxToken(ctx)
		if err != nil {
			return cfg, "", err
		}
		xuid = x.XUID
		cfg.Tokens = client.TokenFunc(func(ctx context.Context, _ string) (client.Token, error) {
			x, err := si.XboxToken(ctx)
			return client.Token{Authorization: x.Authorization()}, err
		})
		return cfg, xuid, nil
	}
	cfg.Tokens = client.StaticTokens{xuid: tok}
	return cfg, xuid, nil
}

// watchLine is one event as --json prints it.
type watchLine struct {
	Time     time.Time        `json:"time"`
	Event    string           `json:"event"`
	XUID     string           `json:"xuid,omitempty"`
	Detail   string           `json:"detail,omitempty"`
	Presence *client.Presence `json:"presence,omitempty"`
}

// print writes one event as a line.
func (o *watchOpts) print(e *env, ev client.Event) {
	l := watchLine{Time: time.Now().UTC()}
	switch v := ev.(type) {
	case *client.Subscribed:
		l.Event, l.XUID, l.Presence = "subscribed", v.Resource.XUID(), v.Presence
		if v.Presence != nil {
			l.Detail = v.Presence.State
		}
	case *client.DevicePresence:
		l.Event, l.XUID, l.Detail = "signed out", v.XUID, v.Device
		if v.LoggedOn {
			l.Event = "signed in"
		}
	case *client.TitlePresence:
		l.Event, l.XUID, l.Detail = "title "+v.State, v.XUID, v.TitleID
	case *client.Resynced:
		l.Event = "resynced"
		if len(v.Presence) > 0 {
			l.Presence, l.Detail = &v.Presence[0], v.Presence[0].State
		}
	case *client.SubscriptionError:
		l.Event, l.XUID, l.Detail = "refused", v.Resource.XUID(), oneLine(v.Err)
	case *client.ConnectionState:
		l.Event = "connected"
		if !v.Connected {
			l.Event, l.Detail = "disconnected", oneLine(v.Err)
		}
	default:
		return
	}
	l.Detail = safetext.Clip(o.given.scrub(l.Detail), 300)
	if o.json {
		b, _ := json.Marshal(l)
		fmt.Fprintf(e.stdout, "%s\n", o.given.scrub(string(b)))
		return
	}
	fmt.Fprintf(e.stdout, "%s\n", o.given.scrub(fmt.Sprintf("%s %s %s %s", l.Time.Format(time.RFC3339), l.Event, l.XUID, l.Detail)))
}
