"""The slow-client experiment (tools/slow-client-experiment), in modules:
stats (rounds, the ambiguity rule, the verdict), schedule (who is loaded
when), sampler (what is read from /proc and /status), stacks (the
processes of a cell), cells (the cells and their rounds), report (table,
plots), links (the shaped-link lab) and main (options, the run)."""
