// Command bare serves a fixed JSON body of -size bytes on -addr: the
// baseline the mock's wrk figure is compared with (bench/run.sh).
package main

import (
	"flag"
	"log"
	"net/http"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18082", "address to listen on")
	size := flag.Int("size", 200, "body size in bytes")
	flag.Parse()
	body := make([]byte, *size)
	for i := range body {
		body[i] = ' '
	}
	body[0], body[len(body)-1] = '{', '}'
	srv := &http.Server{Addr: *addr, ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(body)
	})}
	log.Fatal(srv.ListenAndServe())
}
