"""The scheduler's Slurm exporter (copied there as the package gpucl_monitor, standard library
only): Slurm's nodes, drains, queue and spend as Prometheus metrics in node_exporter's textfile
directory, and the nodes that are powered up as Prometheus scrape targets.

  slurm_metrics  sinfo/squeue text -> metrics text and file_sd targets (pure), and the program
"""
