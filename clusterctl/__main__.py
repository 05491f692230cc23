# Ctrl-C exits 130 quietly from the first moment, the imports below included.
from clusterctl.interrupt import install

install()

from clusterctl.cli import main  # noqa: E402

main()
