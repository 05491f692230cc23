import sys

from .slurm_metrics import main

sys.exit(main(sys.argv[1:]))
