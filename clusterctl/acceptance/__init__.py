"""The acceptance report people open: `validate --nccl --report PATH` (HTML, PNG or SVG), and
`validate --train --report PATH.html`.

plot    busbw against message size per node group, drawn with matplotlib (Agg)
page    the self-contained HTML page: verdict and why, plots, pairs, history, what ran where
train_page  the same for `validate --train`: verdict, throughput, every rank's forward pass

Only the CLI imports it, and only when a report is asked for (matplotlib is slow to import).
"""
