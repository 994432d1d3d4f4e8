module evfcgid/bench/go-dropbox

go 1.19
