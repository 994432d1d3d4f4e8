// Command fcgi-peer is a benchmark peer of make bench, not the product:
// Go's standard net/http/fcgi responder (a goroutine per connection and
// one per request, as fcgi.Serve does) answering evfcgid's /hello and
// /big with the same bytes, so the two can be measured side by side.
// The bench script builds it with go build when golang-go is installed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/fcgi"
	"os"
	"strconv"
)

// The demo body: this 64-byte line over and over, cut at the length.
const patternLine = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.\n"

const bigSize = 96256

var (
	hello = []byte("Hello World\n")
	big   = bytes.Repeat([]byte(patternLine), bigSize/len(patternLine)+1)[:bigSize]
)

// answer writes body with the type and length evfcgid sends.
func answer(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/plain")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

func route(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/hello":
		answer(w, http.StatusOK, hello)
	case "/big":
		answer(w, http.StatusOK, big)
	default:
		answer(w, http.StatusNotFound, []byte("Not Found\n"))
	}
}

func main() {
	listen := flag.String("listen", "", "HOST:PORT to serve FastCGI on (required)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(),
			"usage: fcgi-peer --listen HOST:PORT\n"+
				"Go's net/http/fcgi answering /hello and /big as evfcgid does:\n"+
				"a peer of make bench, not the product.\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *listen == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("fcgi-peer: %v", err)
	}
	log.Fatalf("fcgi-peer: %v", fcgi.Serve(l, http.HandlerFunc(route)))
}
