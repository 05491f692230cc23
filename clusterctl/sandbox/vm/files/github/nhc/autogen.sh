#!/bin/sh
# gpucl sandbox stand-in: like NHC's autogen.sh, needs autoconf, then runs ./configure "$@".
set -e
autoreconf -V >/dev/null 2>&1 || { echo "autogen.sh: autoreconf not found (install autoconf automake)" >&2; exit 1; }
exec ./configure "$@"
