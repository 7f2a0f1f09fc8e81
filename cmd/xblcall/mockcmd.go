package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/tunnel"
	"github.com/xblgo/fgrl/internal/xblid"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
	"github.com/xblgo/fgrl/mock/mockprom"
	"github.com/xblgo/fgrl/mock/tlsca"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
)

func mockCommand(e *env) *cobra.Command {
	o := new(mockOpts)
	c := &cobra.Command{
		Use:   "mock",
		Short: "serve the FGRL mock until interrupted",
		Example: `  xblcall mock --addr 127.0.0.1:8080
  curl -H "Host: profile.xboxlive.com" -H "Authorization: $(xblcall token --xuid 1 --title 2)" \
      http://127.0.0.1:8080/users/me/profile/settings
  xblcall mock --error-rate 0.1 --latency 200ms --retry-after http-date
  xblcall mock --redis redis://127.0.0.1:6379/0 --addr :8081   # replicas sharing one FGRL state
  xblcall mock --https 127.0.0.1:8443 --ca-out ca.pem        # HTTPS at the services' real names
  HTTPS_PROXY=http://127.0.0.1:8080 curl --cacert ca.pem https://profile.xboxlive.com/...
  xblcall mock --hosts >> /etc/hosts                          # the names to point at the mock
  xblcall mock --https 127.0.0.1:8443 --ca-out ca.pem --node-preload mock.cjs &
  NODE_EXTRA_CA_CERTS=ca.pem node --require ./mock.cjs my_tests.js   # Node 20: the real names, no root
  xblcall mock --world world.json                             # your accounts, friends, titles and stats
  xblcall mock --script script.yaml                           # scripted answers before the mock's own

Clients written for the real services reach the mock unchanged over HTTPS:
its TLS certificate names every host it serves (xblcall mock --hosts) and
is signed by a CA made at start (--ca-out writes its certificate for
clients to trust; --ca-cert and --ca-key keep one across runs). Point the
names at the mock (a hosts file, a container's --add-host) and use the
--https port, or use the plain port as an HTTPS proxy (CONNECT), which
answers only the hosts served and never opens a connection elsewhere.
A connection idle for --idle-timeout (2m) is closed, a keep-alive one or a
CONNECT tunnel alike, as is one that has not sent its request header (or
finished its TLS handshake) within --header-timeout (10s), or whose request
body sends nothing for --body-timeout (10s) or, past it, comes slower than
1 KiB a second (mock.MinBodyRate); each port keeps at most
--max-conns (1024) open: the next waits until one closes.
Sign-in works as against the real services: login.live.com
(oauth20_authorize.srf, oauth20_token.srf), login.microsoftonline.com,
user.auth.xboxlive.com and xsts.auth.xboxlive.com. A game backend signs
in as a service over HTTPS at service.auth.xboxlive.com with the Business
Partner Certificate --partner-cert writes (xblcall login --service).

The mock answers for real Xbox host names through the Host header. Its own
endpoints are on the same address: /metrics (Prometheus), the live page
/_fgrl/ (every key's counts, recent 429s, faults) and the admin API:
  curl 'http://127.0.0.1:8080/_fgrl/api/keys?xuid=2533274791234567&title=1234567890&scope=profile'
  curl -X DELETE 'http://127.0.0.1:8080/_fgrl/api/keys'                 # forget every count
  curl -X PUT -d '{"errorRate": 0.2, "retryAfter": "http-date"}' http://127.0.0.1:8080/_fgrl/api/faults
  curl -X PUT --data-binary @world.json http://127.0.0.1:8080/_fgrl/api/world  # seed the world
  curl -X POST http://127.0.0.1:8080/_fgrl/api/world/reset             # back to it, between tests
  curl -X PUT --data-binary @script.yaml http://127.0.0.1:8080/_fgrl/api/script # answers in sequence
  curl -X PUT -d '{"services": [{"service": "presence", "status": 429, "for": "2m"}]}' http://127.0.0.1:8080/_fgrl/api/faults
  curl http://127.0.0.1:8080/_fgrl/api/calls.har > calls.har   # what the mock saw; xblcall analyze reads it
  xblcall check --no-429 --certify                              # exit 1 when the code under test failed

Every service answers from one world: accounts with gamertags, gamerscore
and tier, friends and follows, recent players, titles played with their
achievement progress and stats, and the apps whose redirect URIs sign-in
sends codes to (mock.World documents the file). Without --world it is the
default one: every XUID exists with twelve friends.

The admin endpoints answer only to this machine: requests from other peers
need --admin-token or $XBLCALL_ADMIN_TOKEN (made and printed at start when
--addr is not a loopback address; one given is never printed), and every request's Host must be an IP address, localhost or an
--admin-host name (a guard against DNS rebinding from a web page).

Each request is logged on standard error once answered (log/slog): method,
host, path, status and, for a counted request, its key (scope, userhash,
title; never the token) with the burst and sustain counts and limits after
it. --log-format json writes one JSON object a line; off logs nothing.
`,
		RunE: runE(e, o.run),
	}
	c.Flags().AddFlagSet(mockFlags(o))
	complete(c, map[string][]string{"revision": limits.Revisions(), "retry-after": slices.Sorted(slices.Values(mock.RetryAfterModes())), "log-format": {"text", "json", "off"}}, map[string][]string{"limits": {"json"}, "world": {"json", "yaml", "yml"}, "script": {"json", "yaml", "yml"}, "redis-ca": {"pem", "crt"}, "ca-cert": {"pem", "crt"}, "ca-key": {"pem", "key"}, "ca-out": {"pem"}, "partner-cert": {"pem"}}, nil)
	return c
}

type mockOpts struct {
	addr, limits, revision, legacy, retryAfter, redis, redisCA string
	world, script                                              string
	logFormat                                                  string
	align, fallback, failOpen                                  bool
	latency                                                    time.Duration
	errorRate, resetRate                                       float64
	seed                                                       uint64
	adminToken                                                 string
	adminHosts                                                 []string
	https, caCert, caKey, caOut, nodePreload                   string
	partnerCert, partnerName, partnerSandbox                   string
	hosts, endpoints                                           bool
	conns                                                      mock.ConnLimits

	store *redisstore.Store // set by options when --redis is given
}

func mockFlags(o *mockOpts) *flag.FlagSet {
	fs := newFlagSet("mock")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&o.limits, "limits", "", "limits data file")
	fs.StringVar(&o.revision, "revision", "2020", "built-in limits table")
	fs.BoolVar(&o.align, "align", false, "align windows to the clock instead of the first request")
	fs.StringVar(&o.legacy, "legacy", "", "comma-separated legacy title IDs (decimal), exempt from FGRL")
	fs.StringVar(&o.redis, "redis", "", "keep the FGRL counts in this Redis (redis://host:port/db), shared by replicas")
	fs.StringVar(&o.redisCA, "redis-ca", "", "PEM file of the CA that signs the Redis server's certificate (with a rediss:// URL)")
	fs.BoolVar(&o.failOpen, "fail-open", false, "serve requests when Redis fails (default: answer 503)")
	fs.StringVar(&o.script, "script", "", "answer the requests a JSON or YAML script matches with its answers, in sequence (see mock.Script)")
	fs.StringVar(&o.world, "world", "", "seed the services' world from this JSON or YAML file (accounts, friends, titles, stats, sign-in apps; see mock.World)")
	fs.BoolVar(&o.fallback, "fallback", false, "count hosts without a rule at 10 / 30 (the trace analyzer's assumption)")
	fs.DurationVar(&o.latency, "latency", 0, "added latency per request")
	fs.Float64Var(&o.errorRate, "error-rate", 0, "fraction of admitted requests answered 500 or 503")
	fs.Float64Var(&o.resetRate, "reset-rate", 0, "fraction of admitted requests whose connection is reset")
	fs.StringVar(&o.retryAfter, "retry-after", "seconds", "Retry-After form: seconds, missing, http-date, huge, negative, garbage")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the fault dice")
	fs.StringVar(&o.logFormat, "log-format", "text", "request log on stderr: text, json or off")
	fs.StringVar(&o.adminToken, "admin-token", "", "token that admits peers off this machine to /metrics, the live page and the admin API (default $"+adminTokenEnv+", which keeps it out of the process list; without either: loopback only, and one is made and printed when --addr is not loopback)")
	fs.StringSliceVar(&o.adminHosts, "admin-host", nil, "a name the admin endpoints answer to besides IP addresses and localhost (repeatable)")
	fs.StringVar(&o.https, "https", "", "also serve HTTPS on this address (HOST:PORT), with a certificate naming every host served")
	fs.StringVar(&o.caCert, "ca-cert", "", "PEM file of the CA that signs the TLS certificate (with --ca-key; default: a new CA each run)")
	fs.StringVar(&o.caKey, "ca-key", "", "PEM file of that CA's private key, readable by its owner only")
	fs.StringVar(&o.caOut, "ca-out", "", "write the CA certificate (PEM) to this file, for clients to trust")
	fs.StringVar(&o.nodePreload, "node-preload", "", "with --https: write a CommonJS preload to this file that resolves the hosts served to the mock (node --require FILE)")
	fs.StringVar(&o.partnerCert, "partner-cert", "", "write a Business Partner Certificate of the CA and its key (PEM, one file, readable by its owner only) to this file, for a game backend's service sign-in")
	fs.StringVar(&o.partnerName, "partner-name", "fgrl-mock-backend", "the service the --partner-cert names (what its service-auth calls count against)")
	fs.StringVar(&o.partnerSandbox, "partner-sandbox", "", "the one sandbox the --partner-cert is for (default: every sandbox)")
	connFlags(fs, &o.conns)
	fs.BoolVar(&o.hosts, "hosts", false, "print a hosts-file line (127.0.0.1 <host>) for every host served, and exit")
	fs.BoolVar(&o.endpoints, "endpoints", false, "print every call the mock answers (host, method, path, contract version) as a Markdown table, and exit")
	return fs
}

// connFlags are the bounds of a server's connections (mock.ConnLimits),
// the mock's and the proxy's flags alike.
func connFlags(fs *flag.FlagSet, c *mock.ConnLimits) {
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", mock.DefaultIdleTimeout, "close a connection (keep-alive, or a CONNECT tunnel) that waits this long for a request, or an untouched tunnel for a byte")
	fs.DurationVar(&c.HeaderTimeout, "header-timeout", mock.DefaultHeaderTimeout, "close a connection whose TLS handshake or request header takes longer (one that sends nothing, among them)")
	fs.DurationVar(&c.BodyTimeout, "body-timeout", mock.DefaultBodyTimeout, "close a connection whose request body sends nothing for this long, or comes slower than 1 KiB a second past it")
	fs.IntVar(&c.MaxConns, "max-conns", mock.DefaultMaxConns, "connections open at once on each port; past it the next waits for one to close")
}

// checkConns refuses bounds that are not positive.
func checkConns(c mock.ConnLimits) error {
	if c.IdleTimeout <= 0 || c.HeaderTimeout <= 0 || c.BodyTimeout <= 0 || c.MaxConns <= 0 {
		return &exitError{2, errors.New("--idle-timeout, --header-timeout, --body-timeout and --max-conns must be positive")}
	}
	return nil
}

// newLogger returns the log --log-format asks for (nil for off).
func newLogger(format string, w io.Writer) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	case "off":
		return nil, nil
	}
	return nil, &exitError{2, fmt.Errorf("unknown --log-format %s (want text, json or off)", safetext.Quote(format, 40))}
}

// config is the mock's Config from the flags.
func (o *mockOpts) config(e *env) (mock.Config, error) {
	if err := checkAddr("--addr", o.addr, true); err != nil {
		return mock.Config{}, err
	}
	if o.https != "" {
		if err := checkAddr("--https", o.https, true); err != nil {
			return mock.Config{}, err
		}
	}
	limits, err := loadLimits(o.revision, o.limits)
	if err != nil {
		return mock.Config{}, err
	}
	mode, err := mock.ParseRetryAfterMode(o.retryAfter)
	if err != nil {
		return mock.Config{}, &exitError{2, fmt.Errorf("unknown --retry-after %s", safetext.Quote(o.retryAfter, 40))}
	}
	faults := mock.Faults{Latency: throttle.Duration(o.latency), ErrorRate: o.errorRate, ResetRate: o.resetRate, RetryAfter: mode, Seed: o.seed}
	if err := faults.Check(); err != nil {
		return mock.Config{}, &exitError{2, err}
	}
	log, err := newLogger(o.logFormat, e.stderr)
	if err != nil {
		return mock.Config{}, err
	}
	c := mock.Config{Limits: limits, Faults: faults, Logger: log, FailOpen: o.failOpen, Fallback: o.fallback}
	if o.world != "" {
		if c.World, err = readWorld(o.world); err != nil {
			return mock.Config{}, err
		}
	}
	if o.script != "" {
		if c.Script, err = mock.LoadScript(o.script); err != nil {
			return mock.Config{}, fmt.Errorf("--script: %w", err)
		}
	}
	align := throttle.FirstRequest
	if o.align {
		align = throttle.ClockAligned
	}
	if o.store, err = openRedis(o.redis, o.redisCA, align); err != nil { // the store aligns its own windows
		return mock.Config{}, err
	}
	if o.store != nil {
		c.Store = o.store
	} else {
		c.Align = align
	}
	if o.legacy != "" {
		c.LegacyTitles = strings.Split(o.legacy, ",")
		for _, t := range c.LegacyTitles {
			if err := xblid.CheckTitle(t); err != nil {
				return mock.Config{}, &exitError{2, fmt.Errorf("--legacy: %w", err)}
			}
		}
	}
	return c, nil
}

// readWorld reads --world's file; what is wrong with it is a
// *datafile.Error naming the file, line and field.
func readWorld(name string) (mock.World, error) {
	w, err := mock.LoadWorld(name)
	if err != nil {
		return mock.World{}, fmt.Errorf("--world: %w", err)
	}
	return w, nil
}

// openRedis connects to --redis (with --redis-ca's CA for rediss://); nil
// without --redis.
func openRedis(rawURL, caFile string, align throttle.Align) (*redisstore.Store, error) {
	if rawURL == "" {
		if caFile != "" {
			return nil, &exitError{2, errors.New("--redis-ca needs --redis with a rediss:// URL")}
		}
		return nil, nil
	}
	// Neither url.Parse's error nor go-redis's is printed: they quote parts
	// of the URL, a password among them when it holds '/', '?' or '#'
	// (redis://u:123/x@host reads as host u, port 123, database "x@host").
	if _, err := url.Parse(rawURL); err != nil {
		return nil, notAURL("--redis", rawURL, err)
	}
	ro, err := redis.ParseURL(rawURL)
	if err != nil || atAfterAuthority(rawURL) {
		reason := "want redis://[[USER]:PASSWORD@]HOST:PORT[/DB] or rediss://..."
		if atAfterAuthority(rawURL) {
			reason += userinfoHint
		}
		return nil, &exitError{2, fmt.Errorf("--redis: not a Redis URL: %s", reason)}
	}
	if ro.Network == "tcp" {
		if err := checkAddr("--redis: the address", ro.Addr, false); err != nil {
			return nil, err
		}
	}
	if caFile != "" {
		if ro.TLSConfig == nil {
			return nil, &exitError{2, errors.New("--redis-ca needs a rediss:// URL")}
		}
		pem, err := readPEMFile(caFile)
		if err != nil {
			return nil, &exitError{2, fmt.Errorf("--redis-ca: %v", err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &exitError{2, fmt.Errorf("--redis-ca: %s holds no PEM certificate", caFile)}
		}
		ro.TLSConfig.RootCAs = pool
	}
	// go-redis logs dial failures on its own; xblcall says them once, in
	// its words (checkRedis, the 503s' bodies).
	redis.SetLogger(&logging.VoidLogger{})
	return &redisstore.Store{Client: redis.NewClient(ro), Align: align}, nil
}

// onLoopback reports whether a listener's address is on loopback.
func onLoopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

// checkRedis makes one decision on a probe key at start, so that a wrong
// address, password or TLS setting is said at once rather than as 503s.
func checkRedis(ctx context.Context, e *env, s *redisstore.Store, failOpen bool) error {
	k := throttle.Key{User: "xblcall-probe", Title: "0", Scope: "probe"}
	if _, err := s.Peek(ctx, k, throttle.Limit{Burst: 1, Sustain: 1}, time.Now()); err != nil {
		if !failOpen {
			return fmt.Errorf("cannot use Redis: %w (use --fail-open to serve without it)", err)
		}
		fmt.Fprintf(e.stderr, "WARNING: cannot use Redis: %v\nWARNING: serving with --fail-open: no FGRL limit is enforced while Redis fails\n", err)
	}
	return nil
}

// caNote tells where the CA's certificate is for clients to trust.
func caNote(caOut string) string {
	if caOut == "" {
		return " (trust the mock's CA: --ca-out FILE writes it)"
	}
	return " (trust the mock's CA in " + caOut + ")"
}

func (o *mockOpts) run(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		return &exitError{2, errors.New("mock takes no arguments")}
	}
	if o.adminToken == "" {
		o.adminToken = e.getenv(adminTokenEnv)
	}
	cfg, err := o.config(e)
	if err != nil {
		return err
	}
	h, err := mock.New(cfg)
	if err != nil {
		return &exitError{2, err}
	}
	if o.hosts {
		printHostsFile(e.stdout, h)
		return nil
	}
	if o.endpoints {
		printEndpoints(e.stdout, h)
		return nil
	}
	ca, err := o.ca()
	if err != nil {
		return err
	}
	tlsConfig, err := ca.TLSConfig(h.Hosts())
	if err != nil {
		return err
	}
	if o.caOut != "" {
		if err := writeFileAtomic(o.caOut, ca.CertPEM(), 0o644); err != nil {
			return fmt.Errorf("--ca-out: %w", err)
		}
	}
	if o.partnerCert != "" {
		certPEM, keyPEM, err := ca.IssuePartner(tlsca.Partner{Name: o.partnerName, Sandbox: o.partnerSandbox})
		if err != nil {
			return &exitError{2, fmt.Errorf("--partner-cert: %w", err)}
		}
		if err := writePrivate(o.partnerCert, append(certPEM, keyPEM...)); err != nil {
			return fmt.Errorf("--partner-cert: %w", err)
		}
	}
	if o.store != nil {
		if err := checkRedis(ctx, e, o.store, o.failOpen); err != nil {
			return err
		}
	}
	if err := checkConns(o.conns); err != nil {
		return err
	}
	if o.nodePreload != "" && o.https == "" {
		return &exitError{2, errors.New("--node-preload resolves the hosts to the --https port: give --https")}
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	var tlsLn net.Listener
	if o.https != "" {
		if tlsLn, err = net.Listen("tcp", o.https); err != nil {
			ln.Close()
			return err
		}
	}
	if o.nodePreload != "" { // the port is known once listening (--https HOST:0)
		if err := writeFileAtomic(o.nodePreload, nodePreloadFor(h.Hosts(), tlsLn.Addr().(*net.TCPAddr)), 0o644); err != nil {
			ln.Close()
			tlsLn.Close()
			return fmt.Errorf("--node-preload: %w", err)
		}
	}
	access := admin.Config{Token: o.adminToken, Hosts: o.adminHosts, Metrics: mockprom.Handler(h), Logger: cfg.Logger}
	made := access.Token == "" && !onLoopback(ln.Addr())
	if made {
		access.Token = rand.Text() // peers off this machine need it
	}
	// Requests' contexts end when the server shuts down, so that open live
	// pages (event streams) do not hold Shutdown to its timeout.
	base, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	handler := admin.WithServices(h, access)
	proxied := tunnel.NewListener(ln.Addr())
	defer proxied.Close()
	srv := &http.Server{Handler: connectProxy(h, handler, proxied, e.stderr), MaxHeaderBytes: 64 << 10,
		BaseContext: func(net.Listener) context.Context { return base }}
	srv.RegisterOnShutdown(endStreams)
	// The TLS server: --https's port and the CONNECT tunnels. A handshake
	// that names a host the mock does not serve is logged on stderr.
	tlsSrv := &http.Server{Handler: handler, MaxHeaderBytes: 64 << 10,
		BaseContext: func(net.Listener) context.Context { return base }, ErrorLog: log.New(e.stderr, "", 0)}
	// Both close idle connections, the tunnels the TLS server took over
	// among them; each port keeps at most --max-conns open, a tunnel
	// counting on the plain port it came in on.
	o.conns.Apply(srv)
	o.conns.Apply(tlsSrv)
	ln = o.conns.Listener(ln)
	if tlsLn != nil {
		tlsLn = o.conns.Listener(tlsLn)
	}
	fmt.Fprintf(e.stdout, "fgrl mock serving Xbox services at http://%s (send the real host name in the Host header)\n", ln.Addr())
	if tlsLn != nil {
		fmt.Fprintf(e.stdout, "and at https://%s for every host xblcall mock --hosts lists\n", tlsLn.Addr())
	}
	if o.nodePreload != "" {
		fmt.Fprintf(e.stdout, "node --require %s reaches them at their real names\n", o.nodePreload)
	}
	fmt.Fprintf(e.stdout, "HTTPS_PROXY=http://%s reaches the same hosts over TLS%s\n", ln.Addr(), caNote(o.caOut))
	fmt.Fprintf(e.stdout, "live page http://%s%s, metrics http://%s/metrics\n", ln.Addr(), admin.Prefix, ln.Addr())
	switch { // a token given on the command line is never printed: a banner lands in logs (docker logs)
	case made:
		fmt.Fprintf(e.stdout, "admin token %s: peers off this machine send it as 'Authorization: Bearer <token>' (the live page: %s?token=<token>)\n",
			access.Token, admin.Prefix)
	case access.Token != "":
		fmt.Fprintf(e.stdout, "admin token: the one given (--admin-token or $%s, not printed): peers off this machine send it as 'Authorization: Bearer <token>' (the live page: %s?token=<token>)\n",
			adminTokenEnv, admin.Prefix)
	}
	done := make(chan error, 3)
	go func() { done <- srv.Serve(ln) }()
	go func() { done <- tlsSrv.Serve(tls.NewListener(proxied, tlsConfig)) }()
	if tlsLn != nil {
		go func() { done <- tlsSrv.Serve(tls.NewListener(tlsLn, tlsConfig)) }()
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	proxied.Close()
	err = errors.Join(srv.Shutdown(shutdown), tlsSrv.Shutdown(shutdown))
	h.DropRTA() // the websockets, which the servers no longer track
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "fgrl mock stopped")
	return nil
}
