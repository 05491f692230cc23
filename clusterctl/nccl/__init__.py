"""NCCL all-reduce analysis: parse nccl-tests output, judge it, report it, localise bad nodes.

Pure functions over text and numbers; running the tests is someone else's job. Standard library
only (an import-linter contract in pyproject.toml): the sandbox probe and the spec import it too.

model     NcclRun, NcclRow, RankInfo and the parse errors
parse     all_reduce_perf text -> NcclRun: launcher prefixes, one stream, the header lines
rows      the result table's column layout and one row read against it
judge     NcclRun + Thresholds -> Verdict (and the default-algorithm run's AlgorithmRun)
localize  2-node pair results -> suspects
emit      nccl-tests layout for the sandbox probe's own measurements
report    plain-text rows, JSON and JUnit over verdicts (the CLI draws the rich table)
collective  which collective a result table is, from what the log shows
fabric    which network NCCL chose (IB, sockets, the OFI plugin's provider), from its INFO lines
algorithm  which NCCL_ALGO a run was told (Ring, another value, unset), from its ENV lines
units     message sizes: `16G`, `1.5G`, `16GiB` (1024-based, as nccl-tests)

The package imports nothing itself, so `clusterctl.nccl.units` costs only its own module.
"""
