package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblauth"
	"github.com/xblgo/fgrl/proxy"
	"github.com/xblgo/fgrl/throttle"
)

// maxStatus bounds the status read from a proxy.
const maxStatus = 4 << 20

// printStatus asks the proxy at --addr for its status (its admin API) and
// prints it: a table, or JSON with --json.
func (o *proxyOpts) printStatus(ctx context.Context, e *env) error {
	if err := checkAddr("--addr", o.addr, false); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+o.addr+proxy.AdminPrefix+"api/status", nil)
	if o.accessToken != "" {
		req.Header.Set("Authorization", "Bearer "+o.accessToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		scrubURLs(err, nil)
		return fmt.Errorf("no proxy answers at %s: %w", o.addr, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxStatus+1))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		excerpt := xblauth.Secrets{}.Add(o.accessToken).Scrub(string(b)) // a server that echoes the request must not print the access token
		return fmt.Errorf("the proxy at %s answered %d: %s", o.addr, resp.StatusCode, safetext.Clip(excerpt, 300))
	}
	var st proxy.Status
	if len(b) > maxStatus {
		return errors.New("the proxy's status is over 4 MiB")
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("the answer at %s is no proxy's status: %v", o.addr, safetext.Clip(err.Error(), 200))
	}
	if o.json {
		return printJSON(e.stdout, st)
	}
	writeStatus(e.stdout, o.addr, st)
	return nil
}

// writeStatus prints a proxy's status as tables.
func writeStatus(w io.Writer, addr string, st proxy.Status) {
	c := st.Calls
	fmt.Fprintf(w, "fgrl proxy at %s, %s\n", safetext.Clip(addr, 100), st.Time.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "calls: %d served, %d refused locally, %d throttled by the service, %d failed, %d cancelled; "+
		"tunnels: %d to other hosts, %d refused, %d misdirected\n",
		c.Served, c.RefusedLocally, c.Throttled, c.Failed, c.Cancelled, c.Tunnelled, c.TunnelsRefused, c.Misdirected)
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', 0)
	if len(st.Keys) == 0 {
		fmt.Fprintln(tw, "no key had a call in the last 300 s")
	} else {
		fmt.Fprintln(tw, "SCOPE\tUSER (userhash)\tTITLE\tBURST\tSUSTAIN\tWAIT\tLAST CALL (UTC)")
	}
	for _, k := range st.Keys {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\n", safetext.Clip(k.Scope, 64), safetext.Clip(k.User, 40), safetext.Clip(k.Title, 20),
			window(k.Burst), window(k.Sustain), time.Duration(k.Wait).Round(100*time.Millisecond), k.LastCall.UTC().Format(time.TimeOnly))
	}
	if st.MoreKeys > 0 {
		fmt.Fprintf(tw, "(%d more keys not listed)\n", st.MoreKeys)
	}
	if len(st.Learned) > 0 {
		fmt.Fprintln(tw, "\nLEARNED\tUSER\tPERIOD\tDATA'S\tLEARNED\tUNTIL (UTC)")
	}
	for _, l := range st.Learned {
		user := l.User
		if user == "" {
			user = "every user"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", safetext.Clip(l.Scope, 64), safetext.Clip(user, 40), safetext.Clip(l.Period, 10),
			l.Table, l.Learned, l.Until.UTC().Format(time.RFC3339))
	}
	tw.Flush()
}

// window is a window's count against its limit: "7/10".
func window(w throttle.WindowState) string {
	return strconv.Itoa(w.Count) + "/" + strconv.Itoa(w.Limit)
}
