"""`clusterctl validate --train`: a real distributed training run, judged by throughput, step
time, stragglers and scaling. Standard library only, except gpt.py, which runs on the nodes.

gpt       the training program torchrun starts on every node (PyTorch DDP, synthetic tokens)
model     what a run is made of: the model's sizes (presets), each rank's report, a failure
parse     the job's output (srun -l labelled lines, or mpirun's unlabelled) -> a TrainRun
report    the verdict as JSON and JUnit XML
judge     metrics (tokens/s per GPU, step median and p99), stragglers, scaling, the verdict
"""
