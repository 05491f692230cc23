"""The acceptance report people open: `validate --nccl --report PATH` (HTML, PNG or SVG).

plot    busbw against message size per node group, drawn with matplotlib (Agg)
page    the self-contained HTML page: verdict and why, plots, pairs, history, what ran where

Only the CLI imports it, and only when a report is asked for (matplotlib is slow to import).
"""
