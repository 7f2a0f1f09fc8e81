package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// TestWatchPresence: xblcall watch presence, against a mock in another
// server (plain and HTTPS, as xblcall mock serves them), prints the
// subscriptions in force, then the friend signing in and starting the
// title when the friend's presence is written through the mock, and ends
// after --events.
func TestWatchPresence(t *testing.T) {
	t.Parallel()
	const me, friend, title = "2533274791234567", "2533274799999999", "1234567890"
	for _, tls := range []bool{false, true} {
		name := map[bool]string{false: "http", true: "https"}[tls]
		t.Run(name, func(t *testing.T) {
			h := mock.Must(mock.New(mock.Config{World: mock.World{Accounts: []mock.WorldAccount{
				{XUID: me, Friends: []string{friend}}, {XUID: friend, Friends: []string{me}}}}}))
			srv := mock.NewUnstartedServer(h)
			args := []string{"watch", "presence", friend, "--xuid", me, "--title", title, "--events", "5"}
			if tls {
				srv.StartTLS()
				ca := filepath.Join(t.TempDir(), "ca.pem")
				os.WriteFile(ca, srv.CA.CertPEM(), 0o600)
				args = append(args, "--ca-cert", ca)
			} else {
				srv.Start()
			}
			defer srv.Close()
			args = append(args, "--via", srv.URL)
			pr, pw := io.Pipe()
			done := make(chan int, 1)
			go func() {
				var errb strings.Builder
				code := run(context.Background(), args, pw, &errb, withTestEnv(t))
				if code != 0 {
					t.Errorf("exit %d: %s", code, errb.String())
				}
				pw.Close()
				done <- code
			}()
			lines := bufio.NewScanner(pr)
			var got []string
			for lines.Scan() {
				f := strings.Fields(lines.Text())
				got = append(got, strings.Join(f[1:], " "))
				if len(got) == 3 {
					req, _ := http.NewRequest("POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", strings.NewReader(`{"state":"active"}`))
					req.Header.Set("Authorization", mock.Token(friend, title))
					resp, err := srv.Client().Do(req)
					if err != nil || resp.StatusCode != 200 {
						t.Fatalf("presence write: %v %v", err, resp)
					}
					resp.Body.Close()
				}
			}
			<-done
			want := []string{"connected", "subscribed " + friend + " Offline", "subscribed " + friend + " Offline",
				"signed in " + friend + " Scarlett", "title Started " + friend + " " + title}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("printed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestWatchFailsWhenNothingCanCome: watch exits 1, saying why, when it
// ends without the connection ever made (a mock address where nothing
// listens, --for 1s), and at once, without --for, when the service
// refuses both subscriptions for good (a user who does not follow the
// watched one: access denied). Before, both exited 0, and the second ran
// until interrupted, printing nothing more.
func TestWatchFailsWhenNothingCanCome(t *testing.T) {
	t.Parallel()
	const me, stranger = "2533274791234567", "2533274799999999"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	code, out, errs := xblcall(t, "watch", "presence", stranger, "--xuid", me, "--via", closed, "--for", "1s")
	if code != 1 || !strings.Contains(errs, "never connected to the Real-Time Activity service: ") || !strings.Contains(out, "disconnected") {
		t.Errorf("nothing listening: exit %d, stdout %q, stderr %q; want 1, a disconnected line, \"never connected\"", code, out, errs)
	}

	h := mock.Must(mock.New(mock.Config{World: mock.World{Accounts: []mock.WorldAccount{{XUID: me}, {XUID: stranger}}}}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var o, e strings.Builder
	code = run(ctx, []string{"watch", "presence", stranger, "--xuid", me, "--via", srv.URL}, &o, &e, withTestEnv(t))
	if ctx.Err() != nil {
		t.Fatalf("watch of a stranger ran until its test's 30 s: %q %q", o.String(), e.String())
	}
	if code != 1 || strings.Count(o.String(), "refused "+stranger) != 2 || !strings.Contains(e.String(), "every subscription was refused: ") {
		t.Errorf("a stranger: exit %d, stdout %q, stderr %q; want 1, two refused lines, \"every subscription was refused\"", code, o.String(), e.String())
	}
}
