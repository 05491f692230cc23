#!/bin/bash
# gpucl sandbox stand-in for enroot extra hook 50-slurm-pytorch
exit 0
