"""The training job `clusterctl validate --train` runs: a small GPT-style transformer trained with
PyTorch DistributedDataParallel on synthetic tokens (no data set is fetched), one process per GPU,
started by torchrun on every node.

This file is copied to the cluster on its own and runs there (in the NVIDIA PyTorch container on
the cloud, under Debian's python3-torch in the sandbox), so it imports nothing of clusterctl.
Each rank times every step and its forward pass (which has no communication, so it measures that
rank's own speed) and prints them at the end in `GPUCL-TRAIN-STEPS {json}` lines, then one
`GPUCL-TRAIN {json}` line that closes its report; a failure it can name
(out of memory, a peer lost) is one `GPUCL-TRAIN-ERROR {json}` line before it exits 1.
clusterctl.train.parse reads both.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import socket
import sys
import time

MARK = "GPUCL-TRAIN"
CHUNK = 16
"""Steps per GPUCL-TRAIN-STEPS line: each line stays well under 1 KiB."""


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=16, help="sequences per GPU per step")
    p.add_argument("--vocab", type=int, default=32768)
    p.add_argument("--steps", type=int, default=30, help="timed steps")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    p.add_argument("--threads", type=int, default=1, help="CPU threads per rank (no GPU)")
    p.add_argument("--timeout", type=int, default=120, help="seconds a collective may wait")
    return p.parse_args(argv)


def _emit(kind: str, body: dict) -> None:
    print(f"{MARK}{kind} {json.dumps(body, sort_keys=True)}", flush=True)


def _model(torch, a: argparse.Namespace):
    nn = torch.nn
    fn = torch.nn.functional

    class Block(nn.Module):  # type: ignore[name-defined]  # torch is the node's, not ours
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(a.dim), nn.LayerNorm(a.dim)
            self.qkv, self.proj = nn.Linear(a.dim, 3 * a.dim), nn.Linear(a.dim, a.dim)
            self.mlp = nn.Sequential(
                nn.Linear(a.dim, 4 * a.dim), nn.GELU(), nn.Linear(4 * a.dim, a.dim)
            )

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (y.view(b, t, a.heads, d // a.heads).transpose(1, 2) for y in (q, k, v))
            y = fn.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.tok = nn.Embedding(a.vocab, a.dim)
            self.pos = nn.Embedding(a.seq, a.dim)
            self.blocks = nn.Sequential(*[Block() for _ in range(a.layers)])
            self.ln = nn.LayerNorm(a.dim)
            self.head = nn.Linear(a.dim, a.vocab, bias=False)

        def forward(self, idx):
            pos = torch.arange(idx.shape[1], device=idx.device)
            return self.head(self.ln(self.blocks(self.tok(idx) + self.pos(pos))))

    return GPT()


def _kind(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".lower()
    if "out of memory" in text or isinstance(exc, MemoryError):
        return "oom"
    if any(w in text for w in ("connection", "timed out", "timeout", "closed", "reset by peer")):
        return "peer"
    return "crash"


def main(argv: list[str] | None = None) -> int:
    a = _args(argv)
    node = os.environ.get("SLURMD_NODENAME") or os.environ.get("NODE_NAME") or socket.gethostname()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    rank = int(os.environ.get("RANK", "0"))
    try:
        return _train(a, node, local_rank)
    except Exception as exc:  # named for the judge, then the traceback for the user
        message = f"{type(exc).__name__}: {exc}"[:500]
        _emit("-ERROR", {"rank": rank, "node": node, "local_rank": local_rank,
                         "kind": _kind(exc), "message": message})  # fmt: skip
        raise


def _train(a: argparse.Namespace, node: str, local_rank: int) -> int:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
        torch.set_num_threads(a.threads)
    dist.init_process_group(
        "nccl" if cuda else "gloo", timeout=datetime.timedelta(seconds=a.timeout)
    )
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = _model(torch, a).to(device)
    params = sum(p.numel() for p in model.parameters())
    ddp = DistributedDataParallel(
        model, device_ids=[local_rank] if cuda else None, broadcast_buffers=False
    )
    opt = torch.optim.AdamW(ddp.parameters(), lr=3e-4)
    gen = torch.Generator().manual_seed(1000 + rank)
    if rank == 0:
        _emit("-START", {"world": world, "params": params, "backend": dist.get_backend(),
                         "device": torch.cuda.get_device_name() if cuda else "cpu",
                         "torch": torch.__version__})  # fmt: skip

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    steps: list[float] = []
    forward: list[float] = []
    loss_value = math.nan
    for i in range(a.warmup + a.steps):
        batch = torch.randint(0, a.vocab, (a.batch, a.seq + 1), generator=gen).to(device)
        sync()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda):
            logits = ddp(batch[:, :-1])
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, a.vocab).float(), batch[:, 1:].reshape(-1)
            )
        sync()
        t1 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss.backward()  # DDP all-reduces the gradients here
        opt.step()
        sync()
        t2 = time.perf_counter()
        if i >= a.warmup:
            steps.append(round(t2 - t0, 6))
            forward.append(round(t1 - t0, 6))
        loss_value = float(loss.detach())
    # srun -l cuts long lines (and labels each piece): the timings go in short pieces first
    for first in range(0, len(steps), CHUNK):
        _emit("-STEPS", {"rank": rank, "first": first, "step_s": steps[first : first + CHUNK],
                         "forward_s": forward[first : first + CHUNK]})  # fmt: skip
    _emit("", {"rank": rank, "node": node, "local_rank": local_rank, "world": world,
               "tokens_per_step": a.batch * a.seq, "steps": len(steps),
               "loss": round(loss_value, 4)})  # fmt: skip
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
