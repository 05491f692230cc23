from clusterctl.cli import main

main()
