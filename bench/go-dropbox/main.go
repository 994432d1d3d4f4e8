// Command dropbox is the Go twin of examples/dropbox.c, the same file drop
// box written as a user would write it on Go's standard library alone
// (net/http/fcgi behind the same nginx), so bench/dropbox-twin can measure
// the two side by side:
//
//	DROPBOX_PASSWORD=secret dropbox --listen 127.0.0.1:9000 --dir /srv/drop \
//	    [--max-size BYTES]
//
//	GET /                       the list, with an upload form
//	POST /upload                multipart, files in the field "file"
//	                            (50 MiB each; larger: 413, nothing kept)
//	GET, HEAD /files/{name}     the file, with Range
//	POST /login                 form field "password": a session cookie
//	DELETE /files/{name}        with that session only, else 403
//	POST /files/{name}/delete   the same, for the form
//	GET /api/files              [{"name", "size", "mtime"}, ...]
//
// Go 1.19 (Debian 12's) has no {name} patterns: the paths are cut by hand.
package main

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"flag"
	"html/template"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/fcgi"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

var (
	dir      = flag.String("dir", ".", "the folder of the files")
	maxSize  = flag.Int64("max-size", 50<<20, "the largest file, in bytes")
	password = os.Getenv("DROPBOX_PASSWORD")

	mu       sync.Mutex
	sessions = map[string]bool{}
)

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"path": url.PathEscape}).Parse(`<!DOCTYPE html><title>Drop box</title><h1>Files</h1><ul>
{{range .}}<li><a href="/files/{{path .}}">{{.}}</a> <form method=post action="/files/{{path .}}/delete" style=display:inline><button>delete</button></form>
{{end}}</ul><form method=post action=/upload enctype=multipart/form-data><input type=file name=file multiple> <button>Upload</button></form><form method=post action=/login><input type=password name=password> <button>Log in</button></form>
`))

// nameOK: a name that stays in dir: not empty, no '/', no NUL, not hidden.
func nameOK(name string) bool {
	return name != "" && name[0] != '.' && len(name) < 256 &&
		!strings.ContainsAny(name, "/\x00")
}

func loggedIn(r *http.Request) bool {
	c, err := r.Cookie("sid")
	if err != nil {
		return false
	}
	mu.Lock()
	defer mu.Unlock()
	return sessions[c.Value]
}

// methodOK answers 405 with Allow unless r's method is one of allowed.
func methodOK(w http.ResponseWriter, r *http.Request, allowed ...string) bool {
	for _, m := range allowed {
		if r.Method == m || (m == "GET" && r.Method == "HEAD") {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

func listPage(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	if !methodOK(w, r, "GET") {
		return
	}
	entries, err := os.ReadDir(*dir)
	if err != nil {
		http.Error(w, "cannot read the folder", http.StatusInternalServerError)
		return
	}
	var names []string
	for _, e := range entries {
		if nameOK(e.Name()) {
			names = append(names, e.Name())
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	page.Execute(w, names)
}

type fileInfo struct {
	Name  string `json:"name"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"`
}

func apiFiles(w http.ResponseWriter, r *http.Request) {
	if !methodOK(w, r, "GET") {
		return
	}
	entries, err := os.ReadDir(*dir)
	if err != nil {
		http.Error(w, "cannot read the folder", http.StatusInternalServerError)
		return
	}
	files := []fileInfo{}
	for _, e := range entries {
		info, err := os.Stat(filepath.Join(*dir, e.Name()))
		if !nameOK(e.Name()) || err != nil || !info.Mode().IsRegular() {
			continue
		}
		files = append(files, fileInfo{e.Name(), info.Size(), info.ModTime().Unix()})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(files)
}

// files serves /files/{name} and /files/{name}/delete.
func files(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.EscapedPath(), "/files/")
	seg, form := rest, false
	if strings.HasSuffix(rest, "/delete") {
		seg, form = strings.TrimSuffix(rest, "/delete"), true
	}
	name, err := url.PathUnescape(seg)
	if err != nil || !nameOK(name) {
		http.Error(w, "bad name", http.StatusBadRequest)
		return
	}
	path := filepath.Join(*dir, name)
	if form || r.Method == "DELETE" {
		if (form && !methodOK(w, r, "POST")) || (!form && !methodOK(w, r, "GET", "DELETE")) {
			return
		}
		if !loggedIn(r) {
			http.Error(w, "log in first", http.StatusForbidden)
		} else if os.Remove(path) != nil {
			http.NotFound(w, r)
		} else if form {
			http.Redirect(w, r, "/", http.StatusSeeOther)
		} else {
			w.WriteHeader(http.StatusNoContent)
		}
		return
	}
	if !methodOK(w, r, "GET", "DELETE") {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	http.ServeContent(w, r, name, info.ModTime(), f)
}

func login(w http.ResponseWriter, r *http.Request) {
	if !methodOK(w, r, "POST") {
		return
	}
	pw := r.PostFormValue("password")
	if pw == "" {
		http.Error(w, "no password", http.StatusBadRequest)
		return
	}
	if subtle.ConstantTimeCompare([]byte(pw), []byte(password)) != 1 {
		http.Error(w, "wrong password", http.StatusForbidden)
		return
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		http.Error(w, "no randomness", http.StatusInternalServerError)
		return
	}
	sid := hex.EncodeToString(b)
	mu.Lock()
	sessions[sid] = true
	mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: "sid", Value: sid, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// save writes one file part under a hidden name, renamed once whole;
// returns the status to answer, 0 when saved.
func save(p io.Reader, name string) int {
	if !nameOK(name) {
		return http.StatusBadRequest
	}
	tmp, err := os.CreateTemp(*dir, ".upload-")
	if err != nil {
		return http.StatusInternalServerError
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, io.LimitReader(p, *maxSize+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return http.StatusBadRequest
	case n > *maxSize:
		return http.StatusRequestEntityTooLarge
	case os.Rename(tmp.Name(), filepath.Join(*dir, name)) != nil:
		return http.StatusInternalServerError
	}
	return 0
}

func upload(w http.ResponseWriter, r *http.Request) {
	if !methodOK(w, r, "POST") {
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		http.Error(w, "not a multipart form", http.StatusBadRequest)
		return
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		if p.FormName() != "file" || p.FileName() == "" {
			continue
		}
		if status := save(p, p.FileName()); status != 0 {
			http.Error(w, http.StatusText(status), status)
			return
		}
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func main() {
	listen := flag.String("listen", "", "HOST:PORT or unix:PATH")
	flag.Parse()
	if *listen == "" || password == "" || *maxSize <= 0 || flag.NArg() > 0 {
		log.Fatal("usage: DROPBOX_PASSWORD=... dropbox --listen ADDR --dir DIR [--max-size BYTES]")
	}
	network, addr := "tcp", *listen
	if strings.HasPrefix(addr, "unix:") {
		network, addr = "unix", strings.TrimPrefix(addr, "unix:")
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", listPage)
	mux.HandleFunc("/api/files", apiFiles)
	mux.HandleFunc("/login", login)
	mux.HandleFunc("/upload", upload)
	mux.HandleFunc("/files/", files)
	log.Fatal(fcgi.Serve(l, mux))
}
