"""PyTorch DDP's buckets: measured on this machine, then priced in the memory of Megatron-LM 2021 with --DDP-impl torch.

``memory.ddp.buckets`` says DDP without ``gradient_as_bucket_view`` (its default) keeps a second copy of every gradient,
in the gradients' dtype. The oracle is the real ``torch.nn.parallel.DistributedDataParallel`` on a one-rank gloo group:
a communication hook sees every bucket DDP reduces, and the gradients are compared with them after a backward.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from fractions import Fraction

from llm_formulas.formulas.data.calibration import a100
from llm_formulas.formulas.reports.estimate import Inputs, Layout, estimate
from llm_formulas.formulas.data.frameworks import framework
from llm_formulas.formulas.data.gpus import NODE_SIZE, gpu
from llm_formulas.render.numeric.calibrate import calibration_runs
from llm_formulas.render.numeric.evaluator import NUMPY_OPS, numeric, numeric_inputs

HELD = """
import sys, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
dist.init_process_group("gloo", init_method="file://" + sys.argv[2], rank=0, world_size=1)
model = torch.nn.Sequential(*[torch.nn.Linear(512, 512, bias=False) for _ in range(12)]).to(torch.bfloat16)
ddp = DistributedDataParallel(model, gradient_as_bucket_view=sys.argv[1] == "view", bucket_cap_mb=1)
buckets = []
def hook(state, bucket):  # what DDP hands to the all-reduce: its bucket, a flat tensor of its own
    buckets.append((bucket.buffer().data_ptr(), bucket.buffer().numel() * bucket.buffer().element_size()))
    done = torch.futures.Future()
    done.set_result(bucket.buffer())
    return done
ddp.register_comm_hook(None, hook)
ddp(torch.ones(2, 512, dtype=torch.bfloat16)).sum().backward()
grads = [p.grad for p in model.parameters()]
inside = sum(any(start <= g.data_ptr() < start + size for start, size in buckets) for g in grads)
print(sum(size for _, size in buckets), sum(g.numel() * g.element_size() for g in grads), inside, len(grads))
"""
PARAMETERS = 12 * 512 * 512


def _held(tmp_path, mode: str) -> tuple[int, int, int, int]:
    """Bytes in DDP's buckets, bytes in the gradients, gradients lying inside a bucket, gradients."""
    run = subprocess.run([sys.executable, "-c", HELD, mode, str(tmp_path / f"rendezvous-{mode}")], capture_output=True,
                         text=True, timeout=300, check=True)
    bucket_bytes, gradient_bytes, inside, count = map(int, run.stdout.split())
    return bucket_bytes, gradient_bytes, inside, count


def test_pytorch_ddp_keeps_a_second_copy_of_the_gradients_by_default(tmp_path):
    from torch.nn.parallel import DistributedDataParallel

    assert inspect.signature(DistributedDataParallel).parameters["gradient_as_bucket_view"].default is False
    # the default: twelve bf16 gradients of their own and, beside them, buckets as large (2 bytes per parameter each)
    assert _held(tmp_path, "copy") == (2 * PARAMETERS, 2 * PARAMETERS, 0, 12)
    # gradient_as_bucket_view=True: the gradients are views into the buckets, no second copy
    assert _held(tmp_path, "view") == (2 * PARAMETERS, 2 * PARAMETERS, 12, 12)


def test_the_buckets_are_one_more_16_bit_copy_per_parameter():
    # the copy holds one 16-bit gradient per parameter: 2 bytes, 2Ψ in all
    assert numeric("memory.ddp.buckets", P=1) == 2


def _report(key: str, layout: Layout, model: dict) -> dict:
    inputs = numeric_inputs(Inputs(model=model, gpu=gpu("a100-80gb").inputs(), network=25e9, tokens=None, utilization=None,
                                   overlap=Fraction(1, 2), efficiency=a100(), node_size=NODE_SIZE["a100-80gb"],
                                   framework=framework(key)))
    return estimate(layout, inputs, numeric, NUMPY_OPS)


def test_torch_ddp_adds_the_buckets_to_the_backward_and_the_step():
    # Megatron-LM 2021 Table 1's 7.5B row as the authors' script ran it (t = 4, d = 32, b = 16, --DDP-impl torch):
    # against the same layout under local DDP, each GPU holds 2 bytes more per parameter it holds, in the backward and
    # at the optimizer step (20 bytes there, 22 with the buckets)
    run = calibration_runs()[2]
    assert (run.layout.t, run.layout.p, run.framework.key) == (4, 1, "megatron-lm-2021-torch")
    torch_ddp, local = _report("megatron-lm-2021-torch", run.layout, run.model), _report("megatron-lm-2021", run.layout, run.model)
    per_gpu = float(local["params"]["per_gpu"])
    assert abs(per_gpu - 7.5e9 / 4) < 0.02 * 7.5e9 / 4  # Table 1's 7.5B over t = 4
    torch_ddp, local = torch_ddp["memory"], local["memory"]
    assert abs(float(torch_ddp["total"] - local["total"]) - 2 * per_gpu) < 1
    assert abs(float(torch_ddp["optimizer_step"]) - 22 * per_gpu) < 1
