// quitserver behaves like the proxies podlife's stop presets target (envoy, istio-agent, linkerd,
// cloud-sql-proxy): it serves a quit endpoint on loopback and exits 0 when asked, and it exits
// 143 on SIGTERM as an unmodified proxy would.
//
// Flags: -listen (repeatable "port/path" pairs, default the four presets' endpoints) and
// -method (the HTTP method the quit endpoint accepts, POST by default).
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

type endpoints []string

func (e *endpoints) String() string     { return strings.Join(*e, ",") }
func (e *endpoints) Set(v string) error { *e = append(*e, v); return nil }

func main() {
	var listen endpoints
	method := flag.String("method", http.MethodPost, "HTTP method the quit endpoint accepts")
	flag.Var(&listen, "listen", "port/path of a quit endpoint (repeatable)")
	flag.Parse()
	if len(listen) == 0 {
		listen = endpoints{"15020/quitquitquit", "4191/shutdown", "9091/quitquitquit", "9901/quitquitquit"}
	}

	quit := make(chan string, 1)
	for _, ep := range listen {
		port, path, ok := strings.Cut(ep, "/")
		if !ok {
			fmt.Fprintf(os.Stderr, "quitserver: -listen %q is not port/path\n", ep)
			os.Exit(2)
		}
		path = "/" + path
		mux := http.NewServeMux()
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if r.Method != *method {
				w.Header().Set("Allow", *method)
				http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
				return
			}
			w.WriteHeader(http.StatusOK)
			fmt.Fprintln(w, "OK")
			select {
			case quit <- fmt.Sprintf("%s %s on port %s", r.Method, path, port):
			default:
			}
		})
		ln, err := net.Listen("tcp", "0.0.0.0:"+port)
		if err != nil {
			fmt.Fprintf(os.Stderr, "quitserver: %v\n", err)
			os.Exit(2)
		}
		go func() { _ = http.Serve(ln, mux) }()
		fmt.Printf("quitserver: %s %s on port %s quits\n", *method, path, port)
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	select {
	case why := <-quit:
		fmt.Printf("quitserver: %s: exiting 0\n", why)
		time.Sleep(50 * time.Millisecond) // let the response leave
		os.Exit(0)
	case s := <-signals:
		fmt.Printf("quitserver: %v: exiting 143\n", s)
		os.Exit(143)
	}
}
