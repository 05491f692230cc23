#!/bin/bash
# gpucl sandbox stand-in for enroot extra hook 50-mig-config
exit 0
