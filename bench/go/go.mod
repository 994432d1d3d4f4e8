module evfcgid/bench/go

go 1.19
