"""Model states, ZeRO and per-GPU totals against real optimizers and published figures."""

import math

import pytest
import sympy as sp
import torch

from llm_formulas.derivations.reports.catalogue import derivation_of
from llm_formulas.formulas.vocabulary.examples import examples_for
from helpers import value


def tiny_model(dtype=torch.float32):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(48, 96), torch.nn.GELU(), torch.nn.Linear(96, 48), torch.nn.LayerNorm(48)).to(dtype)


def storage_bytes(tensors):
    return sum(t.untyped_storage().nbytes() for t in tensors)


def test_adamw_states_over_fp32_master_weights():
    master = tiny_model(torch.float32)
    params = list(master.parameters())
    count = sum(p.numel() for p in params)
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    master(torch.randn(4, 48)).sum().backward()
    optimizer.step()
    moments = [state[key] for state in optimizer.state.values() for key in ("exp_avg", "exp_avg_sq")]
    steps = [state["step"] for state in optimizer.state.values()]
    assert all(step.dim() == 0 for step in steps)  # one scalar per parameter tensor, not per parameter
    measured = storage_bytes(params) + storage_bytes(moments)
    assert measured == value("memory.optimizer.adam", P=count)


def test_mixed_precision_adam_is_sixteen_bytes_per_parameter():
    master = tiny_model(torch.float32)
    working = tiny_model(torch.bfloat16)  # the 16-bit copy forward and backward run on
    count = sum(p.numel() for p in master.parameters())
    working(torch.randn(4, 48, dtype=torch.bfloat16)).float().sum().backward()
    optimizer = torch.optim.AdamW(master.parameters(), lr=1e-3)
    for p16, p32 in zip(working.parameters(), master.parameters()):
        p32.grad = p16.grad.float()
    optimizer.step()
    moments = [state[key] for state in optimizer.state.values() for key in ("exp_avg", "exp_avg_sq")]
    measured = (storage_bytes(working.parameters()) + storage_bytes(p.grad for p in working.parameters())
                + storage_bytes(master.parameters()) + storage_bytes(moments))
    assert measured == value("memory.model_states", P=count)
    assert measured == 16 * count


def test_sgd_momentum_state():
    master = tiny_model(torch.float32)
    count = sum(p.numel() for p in master.parameters())
    optimizer = torch.optim.SGD(master.parameters(), lr=1e-2, momentum=0.9)
    master(torch.randn(4, 48)).sum().backward()
    optimizer.step()
    momentum = [state["momentum_buffer"] for state in optimizer.state.values()]
    fp32_part = storage_bytes(master.parameters()) + storage_bytes(momentum)
    assert fp32_part + 2 * count + 2 * count == value("memory.model_states.sgd_momentum", P=count)


def test_inference_weight_bytes():
    weight = torch.nn.Linear(64, 32, bias=False).weight
    count = weight.numel()
    assert storage_bytes([weight.to(torch.bfloat16)]) == value("memory.model_states.inference", P=count)
    assert storage_bytes([weight.to(torch.int8)]) == value("memory.model_states.inference.int8", P=count)
    assert value("memory.model_states.inference.int4", P=count) == count // 2  # two 4-bit values per byte


def test_variants_18_and_20_bytes():
    # 000 §3.4.2.1: "一个模型副本内，需要18～20Ψ的空间用于模型状态存储"
    assert value("memory.model_states.fp32_grads", P=1) == 18
    assert value("memory.model_states.grad_buffers", P=1) == 20


@pytest.mark.parametrize("formula_id, published_gb", [
    ("memory.zero", 120), ("memory.zero.stage1", 31.4), ("memory.zero.stage2", 16.6), ("memory.zero.stage3", 1.9)])
def test_zero_stages_match_the_zero_paper(formula_id, published_gb):
    # Rajbhandari et al. 2019, Figure 1: Ψ = 7.5B, N_d = 64, K = 12: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB
    per_gpu = value(formula_id, P=7_500_000_000, d=64, t=1, p=1) / 10**9
    assert float(per_gpu) == pytest.approx(published_gb, abs=0.05)


def test_zero_under_3d_divides_by_d_not_by_gpu_count():
    # Ψ/(t·p) per model-parallel rank first: 175B at t = 8, p = 8, d = 18 (000 §4.1.2)
    stage3 = value("memory.zero.stage3", P=175 * 10**9, t=8, p=8, d=18)
    assert stage3 == sp.Rational(16 * 175 * 10**9, 8 * 8 * 18)
    stage1 = value("memory.zero.stage1", P=175 * 10**9, t=8, p=8, d=18)
    assert stage1 == sp.Rational(4 * 175 * 10**9, 64) + sp.Rational(12 * 175 * 10**9, 64 * 18)


def test_offload_splits_the_states():
    # ZeRO-Offload (Ren et al. 2021, §4): fp16 parameters stay on the GPU (2 bytes each); fp16 gradients and
    # the fp32 Adam states (copy, momentum, variance) go to the CPU: 2 + 12 = 14 bytes each
    gpu = value("memory.zero.offload.gpu", P=10**9, t=1, p=1)
    cpu = value("memory.zero.offload.cpu", P=10**9, t=1, p=1, d=1)
    assert (gpu, cpu) == (2 * 10**9, 14 * 10**9)


def test_s8_llama2_70b_training_memory():
    # 001: "140 + 140 + 840 + 730 = 1850 GB ... 至少 24 张卡；如果用 4090 ... 至少需要 78 张卡"
    (case,) = examples_for("memory.training.selective")
    assert case.case == "S8" and case.claimed == 1850 * 10**9
    assert value("memory.model_states", P=70 * 10**9) == (140 + 140 + 840) * 10**9
    assert case.scaled() == pytest.approx(1850.144, abs=1e-3)
    assert math.ceil(case.exact() / (80 * 10**9)) == 24
    assert math.ceil(case.exact() / (24 * 10**9)) == 78


def test_s20_bloom_training_state():
    # 004: "3525GB需要至少45个80GB的智能处理器"; SOURCES.md S20: 3524.9 GB
    (case,) = examples_for("memory.model_states.grad_buffers")
    assert case.case == "S20" and case.claimed == 3525 * 10**9
    assert case.scaled() == pytest.approx(3524.945, abs=1e-3)
    assert math.ceil(case.exact() / (80 * 10**9)) == 45


def test_largest_micro_batch_fits_and_one_more_does_not():
    layout = dict(P=13 * 10**9, t=4, p=2, a=40, h=5120, s=2048, l=40)  # a 13B model, t = 4, p = 2
    capacity = 80 * 10**9
    b_max = value("memory.max_micro_batch", M_gpu=capacity, **layout)
    assert b_max >= 1
    need = lambda b_: value("memory.per_gpu", b=b_, **layout)  # noqa: E731
    assert need(b_max) <= capacity < need(b_max + 1)
    assert value("memory.per_gpu.headroom", M_gpu=capacity, b=b_max, **layout) >= 0
    # by hand: 16Ψ/(t·p) states, l layers of sbh(10 + 24/t + 5as/(ht)) per sequence on the first stage
    per_sequence = 40 * 2048 * 5120 * (10 + 6) + 40 * 5 * 40 * 2048**2 // 4
    assert b_max == (capacity - 16 * 13 * 10**9 // 8) // per_sequence == 3
    outcomes = derivation_of("memory.max_micro_batch").check()
    assert outcomes and all(o.ok for o in outcomes)
