package fgrlotel_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/xblgo/fgrl/fgrlotel"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// The transport's metrics through the OpenTelemetry SDK and its Prometheus
// exporter, served at /metrics as a game backend would.
func Example() {
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		panic(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	tr := &transport.Transport{Base: mock.NewHandler(), TitleID: "1234567890"}
	if err := fgrlotel.Instrument(tr, fgrlotel.WithMeterProvider(mp)); err != nil {
		panic(err)
	}
	for i := 0; i < 3; i++ {
		req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
		req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
		if resp, err := (&http.Client{Transport: tr}).Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "fgrl_transport_attempts") {
			fmt.Println(sc.Text())
		}
	}
	// Output:
	// fgrl_transport_attempts_total{fgrl_class="read",fgrl_outcome="2xx",fgrl_scope="profile"} 3
}
