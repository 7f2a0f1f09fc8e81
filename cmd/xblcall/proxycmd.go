package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/proxy"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/redisstore"
	"github.com/xblgo/fgrl/transport"
	"github.com/xblgo/fgrl/transport/transportprom"
)

func proxyCommand(e *env) *cobra.Command {
	o := new(proxyOpts)
	c := &cobra.Command{
		Use:   "proxy",
		Short: "serve the fgrl transport to programs in any language: an HTTPS proxy for the Xbox services",
		Example: `  xblcall proxy --ca-out ca.pem                                   # then, in any language:
  HTTPS_PROXY=http://127.0.0.1:3128 curl --cacert ca.pem -H "Authorization: $TOKEN" \
      'https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag'
  xblcall proxy --via http://127.0.0.1:8080 --ca-out ca.pem       # calls go to a mock (xblcall mock)
  xblcall proxy --redis redis://127.0.0.1:6379/0 --metrics        # a fleet of proxies sharing one budget
  xblcall proxy --status                                          # the keys, their budgets, learned limits

Set HTTPS_PROXY in any program and trust one CA: its calls to the Xbox
services go through the fgrl transport, the local budget, XSAPI's retry
rules, a fleet budget on Redis (--redis), with no change to its code.
CONNECT to a host of the limits data (xblcall limits) is ended with the
proxy's CA (made at start: --ca-out writes its certificate for clients to
trust; --ca-key-out its key, readable by its owner only, to keep it with
--ca-cert and --ca-key next time) and each request inside is sent through
the transport to the real host, or to --via (a mock on this machine; with
an https:// --via, --upstream-ca names the CA to trust). A plain HTTP
request in absolute form (GET https://profile.xboxlive.com/... , what some
clients send a proxy, such as axios with HTTPS_PROXY) is served the same
way, from this machine only.

A call the budget lets through waits as the transport waits, until the
application gives up (closes its connection: the call ends and its
budget slot goes back). A call refused locally is answered 429 with
Retry-After, the RateLimit headers and the FGRL JSON body, plus
'Fgrl-Refused: local', so the application's own 429 handling works and
the service's budget is not spent. Request headers choose a call's policy
and are stripped before sending (see also --max-wait and the others,
which set the default):
  Fgrl-Max-Wait: 30s           wait up to this for the budget (0s to 5m)
  Fgrl-Fail-Fast: true         never wait: refused locally at once
  Fgrl-No-Retry: true          sent once
  Fgrl-Attempt-Timeout: 2m     each attempt's timeout (0s to 5m)
  Fgrl-Priority: background    leave each limit's interactive share alone
  Fgrl-Rule: mpsd-search-handle/write   count against this rule
  Fgrl-Bound-Body: true        the attempt timeout covers the whole answer
A bad one is answered 400 and nothing is sent.

CONNECT to any other host, or to a port other than 443, is refused with
403 unless --tunnel-others is given: then it is tunnelled untouched, never
decrypted (sign-in at login.live.com, say), to public addresses only. The
proxy listens on loopback; --addr off loopback needs --access-token, which
peers present as HTTPS_PROXY=http://fgrl:<token>@<host>:<port>, and they
send HTTPS only.
Connections are bounded as the mock's (--idle-timeout, --header-timeout,
--body-timeout, --max-conns). No token reaches the log, the status or the
errors; no body is kept after a call.

The proxy's own endpoints, on its address: the live page /_fgrl/ (every
key's budget, refreshed each second), /_fgrl/api/status (the same as JSON)
and, with --metrics, /metrics (Prometheus: the transport's counters and
learned limits).
`,
		RunE: runE(e, o.run),
	}
	c.Flags().AddFlagSet(proxyFlags(o))
	complete(c, map[string][]string{"revision": limits.Revisions(), "log-format": {"text", "json", "off"}},
		map[string][]string{"limits": {"json"}, "redis-ca": {"pem", "crt"}, "ca-cert": {"pem", "crt"}, "ca-key": {"pem", "key"},
			"ca-out": {"pem"}, "ca-key-out": {"pem", "key"}, "upstream-ca": {"pem", "crt"}}, nil)
	return c
}

type proxyOpts struct {
	addr, via, upstreamCA, title              string
	limits, revision, redis, redisCA          string
	caCert, caKey, caOut, caKeyOut            string
	accessToken, logFormat                    string
	adminHosts                                []string
	tunnelOthers, metrics, background, status bool
	json                                      bool
	policy                                    transport.Policy // --max-wait, --fail-fast, --no-retry, --attempt-timeout, --background
	conns                                     mock.ConnLimits

	upstream *http.Transport // the calls' connections, closed when the proxy stops
}

func proxyFlags(o *proxyOpts) *flag.FlagSet {
	fs := newFlagSet("proxy")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:3128", "address to listen on (with --status: of the proxy to ask)")
	fs.StringVar(&o.via, "via", "", "send every call to a mock at this loopback address (http://127.0.0.1:PORT), the real host in the Host header")
	fs.StringVar(&o.upstreamCA, "upstream-ca", "", "PEM file of a CA to trust besides the system's for the calls' TLS (a mock over HTTPS)")
	fs.StringVar(&o.caCert, "ca-cert", "", "PEM file of the proxy's CA (with --ca-key; default: a new CA each run)")
	fs.StringVar(&o.caKey, "ca-key", "", "PEM file of that CA's private key, readable by its owner only")
	fs.StringVar(&o.caOut, "ca-out", "", "write the CA certificate (PEM) to this file, for clients to trust")
	fs.StringVar(&o.caKeyOut, "ca-key-out", "", "write a new CA's private key (PEM) to this file, readable by its owner only, to keep the CA with --ca-cert and --ca-key")
	fs.BoolVar(&o.tunnelOthers, "tunnel-others", false, "tunnel CONNECT to other hosts' port 443 untouched (never decrypted) instead of refusing it")
	fs.StringVar(&o.limits, "limits", "", "limits data file: its hosts are the ones served")
	fs.StringVar(&o.revision, "revision", "2020", "built-in limits table")
	fs.StringVar(&o.title, "title", "", "title ID the calls are made for (part of every key; the same on every proxy of a fleet)")
	fs.DurationVar(&o.policy.MaxWait, "max-wait", 0, "default Fgrl-Max-Wait: wait for the budget up to this long (at most 5m)")
	fs.BoolVar(&o.policy.FailFast, "fail-fast", false, "default Fgrl-Fail-Fast: never wait, refuse locally at once")
	fs.BoolVar(&o.policy.NoRetry, "no-retry", false, "default Fgrl-No-Retry: send each call once")
	fs.DurationVar(&o.policy.AttemptTimeout, "attempt-timeout", 0, "default Fgrl-Attempt-Timeout (0: XSAPI's, 5 to 30 s; at most 5m)")
	fs.BoolVar(&o.background, "background", false, "default Fgrl-Priority: background")
	fs.StringVar(&o.redis, "redis", "", "keep the budgets in this Redis (redis://host:port/db), shared by a fleet of proxies and transports")
	fs.StringVar(&o.redisCA, "redis-ca", "", "PEM file of the CA that signs the Redis server's certificate (with a rediss:// URL)")
	fs.BoolVar(&o.metrics, "metrics", false, "serve Prometheus metrics at /metrics on the proxy's address")
	fs.StringVar(&o.accessToken, "access-token", "", "token that admits peers off this machine, to the proxy and its pages (required when --addr is not loopback)")
	fs.StringSliceVar(&o.adminHosts, "admin-host", nil, "a name the proxy's pages answer to besides IP addresses and localhost (repeatable)")
	fs.StringVar(&o.logFormat, "log-format", "text", "the calls' log on stderr: text, json or off")
	connFlags(fs, &o.conns)
	fs.BoolVar(&o.status, "status", false, "print the keys, budgets, learned limits and counters of the proxy at --addr, and exit")
	fs.BoolVar(&o.json, "json", false, "with --status: print them as JSON")
	return fs
}

func (o *proxyOpts) run(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		return &exitError{2, errors.New("proxy takes no arguments")}
	}
	if o.status {
		return o.printStatus(ctx, e)
	}
	if o.json {
		return &exitError{2, errors.New("--json goes with --status")}
	}
	srv, ln, err := o.start(e)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(o.conns.Listener(ln)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close()
	}
	<-done
	o.upstream.CloseIdleConnections() // a connection opened and never used holds a server's graceful shutdown
	fmt.Fprintln(e.stdout, "fgrl proxy stopped")
	return nil
}

// start checks the flags, makes the proxy and its listener, writes the
// CA's files and says where it serves.
func (o *proxyOpts) start(e *env) (*proxy.Server, net.Listener, error) {
	cfg, err := o.config(e)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return nil, nil, err
	}
	if err := o.checkListener(ln.Addr()); err != nil {
		ln.Close()
		return nil, nil, err
	}
	srv, err := proxy.New(cfg)
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	addr := ln.Addr().String()
	trust := " (trust its CA: --ca-out FILE writes it)"
	if o.caOut != "" {
		trust = " (trust its CA in " + o.caOut + ")"
	}
	fmt.Fprintf(e.stdout, "fgrl proxy at http://%s sends the Xbox services' calls through the fgrl transport (HTTPS_PROXY=http://%s)%s\n",
		addr, addr, trust)
	if o.via != "" {
		fmt.Fprintf(e.stdout, "calls go to %s, the real host in the Host header\n", shownURL(o.via))
	}
	fmt.Fprintf(e.stdout, "live page http://%s%s, status xblcall proxy --status --addr %s", addr, proxy.AdminPrefix, addr)
	if o.metrics {
		fmt.Fprintf(e.stdout, ", metrics http://%s/metrics", addr)
	}
	fmt.Fprintln(e.stdout)
	if cfg.Token != "" {
		fmt.Fprintln(e.stdout, "peers off this machine present --access-token: HTTPS_PROXY=http://fgrl:<token>@<host>:<port> (the pages: 'Authorization: Bearer <token>' or ?token=<token>)")
	}
	return srv, ln, nil
}

// checkListener refuses what the proxy may not listen as: off loopback
// without --access-token (the proxy would serve the network's calls with
// no check), or at --via's own address (every call would come back to it).
func (o *proxyOpts) checkListener(a net.Addr) error {
	if o.accessToken == "" && !onLoopback(a) {
		return &exitError{2, fmt.Errorf("--addr %s is not a loopback address: give --access-token, which peers off this machine must present",
			safetext.Quote(o.addr, 100))}
	}
	if o.via == "" {
		return nil
	}
	u, err := parseVia("--via", o.via)
	if err != nil {
		return err
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	t, ok := a.(*net.TCPAddr)
	host := u.Hostname()
	same := ok && (t.IP.IsUnspecified() || host == "localhost" && t.IP.IsLoopback() || net.ParseIP(host).Equal(t.IP))
	if same && port == strconv.Itoa(t.Port) {
		return &exitError{2, fmt.Errorf("--via \"%s\" is the proxy's own address: every call would come back to it", shownURL(o.via))}
	}
	return nil
}

// config is the proxy's Config from the flags: the transport, the CA's
// TLS (its files written), the limits and the bounds.
func (o *proxyOpts) config(e *env) (proxy.Config, error) {
	if err := checkAddr("--addr", o.addr, true); err != nil {
		return proxy.Config{}, err
	}
	if o.title != "" {
		if err := xblid.CheckTitle(o.title); err != nil {
			return proxy.Config{}, &exitError{2, fmt.Errorf("--title: %w", err)}
		}
	}
	if o.policy.MaxWait < 0 || o.policy.AttemptTimeout < 0 || o.policy.MaxWait > transport.MaxPolicyWait || o.policy.AttemptTimeout > transport.LongCallTimeout {
		return proxy.Config{}, &exitError{2, errors.New("--max-wait and --attempt-timeout must be from 0s to 5m")}
	}
	if err := checkConns(o.conns); err != nil {
		return proxy.Config{}, err
	}
	lim, err := loadLimits(o.revision, o.limits)
	if err != nil {
		return proxy.Config{}, err
	}
	log, err := newLogger(o.logFormat, e.stderr)
	if err != nil {
		return proxy.Config{}, err
	}
	tr, err := o.transport(lim)
	if err != nil {
		return proxy.Config{}, err
	}
	tr.Logger = log
	tlsConf, err := o.tls(lim)
	if err != nil {
		return proxy.Config{}, err
	}
	c := proxy.Config{Transport: tr, TLS: tlsConf, Limits: lim, TunnelOthers: o.tunnelOthers, Token: o.accessToken,
		AdminHosts: o.adminHosts, Logger: log, ConfigureServer: o.conns.Apply}
	if o.metrics {
		reg := prometheus.NewRegistry()
		reg.MustRegister(transportprom.Collector(tr))
		c.Metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	}
	return c, nil
}

// transport is the proxy's transport: to the services, or --via, over TLS
// that trusts --upstream-ca too; its budget in --redis when given. The
// service's own 429s pass as they came (Raw429).
func (o *proxyOpts) transport(lim *limits.Limits) (*transport.Transport, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxResponseHeaderBytes = 64 << 10
	o.upstream = base
	if o.upstreamCA != "" {
		pool, err := certPool(o.upstreamCA)
		if err != nil {
			return nil, &exitError{2, fmt.Errorf("--upstream-ca: %w", err)}
		}
		base.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	var rt http.RoundTripper = base
	if o.via != "" {
		var err error
		if rt, err = viaTransport(o.via, base); err != nil {
			return nil, err
		}
	}
	if o.background {
		o.policy.Priority = transport.Background
	}
	tr := &transport.Transport{Base: rt, Limits: lim, TitleID: o.title, Policy: o.policy, Raw429: true}
	store, err := openRedis(o.redis, o.redisCA, throttle.FirstRequest)
	if err != nil {
		return nil, err
	}
	if store != nil {
		if err := probeBudget(store); err != nil {
			return nil, err
		}
		tr.Budget = store
	}
	return tr, nil
}

// probeBudget reads a probe key's budget once at start, so that a wrong
// Redis address, password or TLS setting is said at once rather than met
// as a silent local budget.
func probeBudget(s *redisstore.Store) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	k := throttle.Key{User: "xblcall-probe", Title: "0", Scope: "probe"}
	if _, err := s.Snapshot(ctx, k, throttle.Limit{Burst: 1, Sustain: 1}, time.Now()); err != nil {
		return fmt.Errorf("cannot use Redis: %w", err)
	}
	return nil
}

// maxPEMFile bounds a PEM file of certificates read (--redis-ca,
// --ca-cert, --ca): /dev/zero, or a wrong path to a large file, is no
// reason to read without end.
const maxPEMFile = 1 << 20

// readPEMFile reads a PEM file of at most maxPEMFile bytes. A pipe is
// taken (--ca-cert <(...), /dev/stdin), read up to the bound.
func readPEMFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPEMFile+1))
	if err == nil && len(b) > maxPEMFile {
		err = fmt.Errorf("%s: larger than %d bytes", safetext.Quote(name, 200), maxPEMFile)
	}
	return b, err
}

// certPool is the system's roots and the certificates of a PEM file of at
// most 1 MiB.
func certPool(name string) (*x509.CertPool, error) {
	b, err := readPEMFile(name)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", safetext.Quote(name, 200))
	}
	return pool, nil
}

// tls is the TLS that ends the tunnels: the CA of --ca-cert and --ca-key,
// checked as the mock's, or a new one; its certificate written to --ca-out
// and a new one's key to --ca-key-out, readable by its owner only.
func (o *proxyOpts) tls(lim *limits.Limits) (*tls.Config, error) {
	if o.caKeyOut != "" && o.caCert != "" {
		return nil, &exitError{2, errors.New("--ca-key-out writes a new CA's key: with --ca-cert and --ca-key the key is kept already")}
	}
	ca, err := (&mockOpts{caCert: o.caCert, caKey: o.caKey}).ca()
	if err != nil {
		return nil, err
	}
	if o.caOut != "" {
		if err := writeFileAtomic(o.caOut, ca.CertPEM(), 0o644); err != nil {
			return nil, fmt.Errorf("--ca-out: %w", err)
		}
	}
	if o.caKeyOut != "" {
		key, err := ca.KeyPEM()
		if err != nil {
			return nil, err
		}
		if err := writePrivate(o.caKeyOut, key); err != nil {
			return nil, fmt.Errorf("--ca-key-out: %w", err)
		}
	}
	return ca.TLSConfig(proxy.Hosts(lim))
}
