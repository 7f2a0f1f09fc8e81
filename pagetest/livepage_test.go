package pagetest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
	"github.com/xblgo/fgrl/transport"
)

const (
	xuid  = "2533274790000001"
	title = "1234567890"
)

// TestLivePage loads the mock's live page (/_fgrl/) in headless Chromium and
// watches a key's burst count rise as calls come in, without a script
// error.
func TestLivePage(t *testing.T) {
	ctx, scriptErrors := Start(t, 60*time.Second)
	// The mock's clock stands still, so a slow machine cannot see the 15 s
	// window end between the calls and the counts it waits for.
	stopped := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	h := mock.Must(mock.New(mock.Config{Now: func() time.Time { return stopped }}))
	srv := httptest.NewServer(admin.WithServices(h, admin.Config{}))
	defer srv.Close()
	burst := fmt.Sprintf(`(() => { const td = document.querySelector('tr[data-key="%s/%s/profile"] td.burst');
		return td ? td.textContent : '' })()`, mock.UserHash(xuid), title)
	waitFor := func(want string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[string](burst+` === '`+want+`' ? '`+want+`' : null`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
			last, _ := chromedp.Run(ctx, chromedp.Evaluate[string](burst))
			t.Fatalf("waiting for burst %q: %v (page shows %q)", want, err, last)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/_fgrl/")); err != nil {
		t.Fatal(err)
	}
	// The transport's own budget is off: it reads the answers' RateLimit
	// headers, whose reset never runs down while the mock's clock stands
	// still, and would wait for windows that, by the real clock, never end.
	game := &http.Client{Transport: &transport.Transport{Base: srv.Client().Transport, TitleID: title, DisableBudget: true}}
	calls := func(c *http.Client, n int) {
		for range n {
			req, _ := http.NewRequest("GET", srv.URL+"/users/me/profile/settings?settings=Gamertag", nil)
			req.Host = "profile.xboxlive.com"
			req.Header.Set("Authorization", mock.Token(xuid, title))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	calls(game, 3)
	waitFor("3 / 10")
	calls(game, 7) // ten in all: the burst limit
	waitFor("10 / 10")
	calls(srv.Client(), 2) // two more, straight: the service answers 429
	waitFor("12 / 10")
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#status")))
	if err != nil || status != "live" {
		t.Errorf("status %q, %v", status, err)
	}
	recent, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#recent tbody tr').length`))
	if recent != 2 {
		t.Errorf("%d recent 429s shown, want 2", recent)
	}
	if errs := scriptErrors(); len(errs) > 0 {
		t.Errorf("script errors: %v", errs)
	}
}

// TestLivePageOutage starts a presence outage from the live page's form:
// the mock's faults hold it, the page shows it, and a bad service is
// refused with the admin API's error on the page.
func TestLivePageOutage(t *testing.T) {
	ctx, scriptErrors := Start(t, 60*time.Second)
	h := mock.NewHandler()
	srv := httptest.NewServer(admin.WithServices(h, admin.Config{}))
	defer srv.Close()
	submit := func(service string) {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS(`#outage input[name=service]`), service),
			chromedp.Click(chromedp.CSS(`#outage button`)),
		); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/_fgrl/")); err != nil {
		t.Fatal(err)
	}
	submit("presence")
	shown := `document.getElementById('faults').textContent.includes('"service": "presence"') ? 'yes' : null`
	if _, err := chromedp.Run(ctx, chromedp.Poll[string](shown, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the page never showed the outage: %v", err)
	}
	if f := h.Faults(); len(f.Services) != 1 || f.Services[0].Service != "presence" || f.Services[0].Status != 429 || f.Services[0].Until.IsZero() {
		t.Errorf("faults after the form: %+v", f.Services)
	}
	submit("nobody")
	refused := `document.getElementById('outagemsg').textContent.includes('no rule has service') ? 'yes' : null`
	if _, err := chromedp.Run(ctx, chromedp.Poll[string](refused, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Errorf("a bad service was not refused on the page: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#endall`))); err != nil {
		t.Fatal(err)
	}
	ended := `document.getElementById('outagemsg').textContent === 'set' ? 'yes' : null`
	if _, err := chromedp.Run(ctx, chromedp.Poll[string](ended, chromedp.WithPollingTimeout(10*time.Second))); err != nil || len(h.Faults().Services) != 0 {
		t.Errorf("ending the faults: %v, %+v", err, h.Faults().Services)
	}
	for _, e := range scriptErrors() {
		if !strings.Contains(e, "status of 400") { // the refusal asked for
			t.Errorf("script error: %v", e)
		}
	}
}
