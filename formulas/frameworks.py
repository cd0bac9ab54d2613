"""Training frameworks as the performance model sees them: what each overlaps, and which features it has.

The layout (t, p, d, b, m, v) and the settings (ZeRO stage, recompute, sequence parallelism) say
*what* runs; the framework says *how*: five switches of formulas/performance.py, each read off
the framework's code or its paper, and the features it offers (``plan --framework`` searches only
those). No switch is fitted to a run.

- ``default``: the reference model of issue 16 (a current Megatron Core or PyTorch DDP job): the DP
  gradient reduction bucketed and overlapped with the last micro-batch's backward (σ_DP^ovl = 1;
  PyTorch DDP, Li et al. 2020; Megatron Core's --overlap-grad-reduce), every TP all-reduce
  blocking (σ_TP^ovl = 0, a conservative price), sends and receives batched (σ_P2P^ser = 0); every
  feature.
- ``megatron-lm-2021``: the code of Narayanan et al. 2021 (Megatron-LM's April 2021 release, commit
  50a4b5fa02; its pipelined Table 1 rows ran ``--DDP-impl local``, the authors' script says):
  ``train_step`` calls the local DDP's ``allreduce_gradients()``
  after ``forward_backward_func`` returns (``--DDP-impl local`` is the default), so the all-reduce is
  not overlapped (σ_DP^ovl = 0); the column-parallel layers all-reduce their input gradient with a
  blocking ``copy_to_tensor_model_parallel_region`` (σ_TP^ovl = 0); ``p2p_communication.py`` sends
  and receives both directions in one ``batch_isend_irecv`` with scatter/gather (σ_P2P^ser = 0).
  Features: no ZeRO (DeepSpeed's was integrated only for the §5.2 comparison), recompute none or
  full (``--checkpoint-activations``; selective recompute and sequence parallelism are Korthikanti
  et al. 2022), interleaving (``--num-layers-per-virtual-pipeline-stage``, m a multiple of p).
  Memory: its fp16 optimizer copies every 16-bit gradient to fp32 at the step
  (``_copy_model_grads_to_main_grads``: ``main_param.grad = model_param.grad.float()``) while the
  16-bit gradients live on, so the states peak at 20 bytes per parameter
  (``memory.model_states.grad_buffers``) once the activations are freed; the report's memory is the
  larger of the backward's (16Ψ/(t·p) + activations) and the step's (20Ψ/(t·p)).
- ``megatron-lm-2021-torch``: the same code run with ``--DDP-impl torch``, as the authors' script ran
  Table 1's four rows without a pipeline (examples/sc21/run_table_1.sh, commit de7dc40f88):
  ``forward_backward_no_pipelining`` runs every micro-batch but the last under PyTorch DDP's
  ``no_sync()``, so DDP's bucketed all-reduce overlaps the last micro-batch's backward (σ_DP^ovl = 1).
  No pipeline: ``megatron/training.py`` asserts ``DDP_impl == 'local'`` whenever p > 1 or v > 1.
  Memory: ``torchDDP(model_module, device_ids=[i], output_device=i, process_group=...)`` leaves
  ``gradient_as_bucket_view`` at its default, off, so DDP's buckets hold a second 16-bit copy of
  every gradient from construction on (``memory.ddp.buckets``, 2Ψ/(t·p); pytorch/pytorch#41954;
  tests/test_ddp_buckets.py measures it on this machine): 18 bytes per parameter in the backward,
  22 at the step.
- ``megatron-lm-2022``: the code of Korthikanti et al. 2022 (commit 841f789f48 and its sequence-parallel
  successors): the backward all-reduce of a column-parallel layer's input gradient overlaps its
  weight-gradient GEMM (``LinearWithGradAccumulationAndAsyncAllreduce``, on by default; §6.2: "an
  optimization in the backward pass where we overlap all-reduce communication with the linear
  weight's gradient computation", σ_TP^ovl = 1); "we do not use any overlapping of gradient
  all-reduces with back-propagation" (§6, σ_DP^ovl = 0); batched p2p. Features: no ZeRO, every
  recompute mode, sequence parallelism, interleaving.
- ``deepspeed-pipe``: Megatron-DeepSpeed on DeepSpeed's PipelineEngine from v0.5.4 (BLOOM, BigScience
  2022; MT-NLG, Smith et al. 2022, ran the 2021 engine below). ``TrainSchedule`` is plain 1F1B, one model chunk per stage (no
  interleaving); ``SendActivation``, ``RecvActivation``, ``SendGrad``, ``RecvGrad`` are separate
  blocking instructions (``p2p.send``/``recv`` refuse ``async_op``, σ_P2P^ser = 1), each message a
  1/t ``PartitionedTensor`` slice all-gathered on receipt; ``ReduceGrads`` runs after the last
  micro-batch (σ_DP^ovl = 0); the engine refuses ZeRO-2 and -3 with pipeline parallelism; the
  tensor-parallel layers are Megatron's without the asynchronous all-reduce (bigscience-workshop/
  Megatron-DeepSpeed ``megatron/mpu/layers.py``, σ_TP^ovl = 0). In bf16, as BLOOM trained, the engine's
  ``_exec_backward_pass`` calls the BF16_Optimizer's ``update_hp_grads()`` after every micro-batch
  (#1801, 19 April 2022): ``hp_grad.add_(lp.grad.to(float32))`` over the stage's parameters, 18 bytes
  each through HBM on the compute stream (σ_acc^fp32 = 1, ``perf.grad.accumulate_fp32``; the tr11
  chronicles-prequel: "BF16 optimizer that was just written to accumulate gradients in fp32, so it is
  more memory heavy and is a bit slower"). Those fp32
  gradients are a full-size buffer (``fp32_groups_gradients_flat``, ``zeros_like`` the 16-bit
  parameters, not partitioned by ZeRO-1): 4 more bytes per parameter all run long
  (``memory.bf16.fp32_grads``; the same page: "The additional memory usage is 4bytes x params and it's
  not sharded across gpus"). Features: ZeRO 0 or 1, recompute none or full, no sequence parallelism.
- ``deepspeed-pipe-2021``: the same engine before v0.5.4, as MT-NLG (Smith et al. 2022) trained on it in
  2021: from the engine's first release (commit 65c2f974d, September 2020) until commit e2fdd254e
  ("Big science related changes", 29 September 2021, first in v0.5.4) ``is_grad_partitioned`` was
  False, so ``_exec_send_grads`` sent every rank's input gradient whole, b·s·h·q bytes over the
  network with nothing to gather (σ_P2P^grad = 1); the activations went as slices, as above.
  MT-NLG's own engine is not public: it trained "with mixed precision using 16-bit bfloat" (Smith
  et al. 2022), which DeepSpeed's
  releases gained only in November 2021 (#1398, ZeRO-2) and for the pipeline engine in April 2022
  (#1801), so it ran a development branch. Its runs are priced the way the public releases of their
  time sent gradients and in bf16 as the first public bf16 pipeline path (#1801) runs it, every
  micro-batch's gradients added into fp32 (two assumptions, stated wherever the runs are reported); the
  commit that sliced the gradients was co-authored by MT-NLG's first author twelve days before its
  announcement (11 October 2021).
"""

from __future__ import annotations

from dataclasses import dataclass

RECOMPUTE_ALL = ("none", "selective", "full")


@dataclass(frozen=True)
class Framework:
    """The overlap switches of one framework and the features ``plan`` may use with it."""

    key: str
    description: str
    ovl_dp: int  # σ_DP^ovl: the DP gradient reduction overlaps the last backward
    ovl_tp: int  # σ_TP^ovl: the backward's column-parallel all-reduces overlap their weight-gradient GEMMs
    p2p_serial: int  # σ_P2P^ser: sends and receives one after the other
    p2p_grad_whole: int = 0  # σ_P2P^grad: each TP rank sends the stage's input gradient whole, not a 1/t slice
    grad_fp32: int = 0  # σ_acc^fp32: each micro-batch's 16-bit gradients are added into fp32 ones after its backward
    zero: tuple[int, ...] = (0, 1, 2, 3)
    recompute: tuple[str, ...] = RECOMPUTE_ALL
    sequence_parallel: bool = True
    interleaving: bool = True
    pipeline: bool = True  # False: p must be 1
    step_states: str | None = None  # the model states at the optimizer step, when they exceed the 16 bytes of memory.zero
    resident_states: tuple[str, ...] = ()  # memory formulas (of the GPU's parameters) kept all run long beside memory.zero's
    lora: bool = False  # LoRA/QLoRA fine-tuning (--finetune): only the default framework models it

    def __post_init__(self) -> None:
        if self.p2p_grad_whole and not self.p2p_serial:  # perf.pp.p2p's condition
            raise ValueError(f"{self.key}: a whole gradient is priced for serialised p2p only")

    def switches(self) -> dict[str, int]:
        """The values of the performance model's framework symbols."""
        return {"ovl_dp": self.ovl_dp, "ovl_tp": self.ovl_tp, "p2p_serial": self.p2p_serial, "p2p_grad_whole": self.p2p_grad_whole,
                "grad_fp32": self.grad_fp32}

    def lacks(self, zero: int, recompute: str, sequence_parallel: bool, v: int, p: int = 1) -> str | None:
        """The first feature of a layout this framework does not have, in words, or None."""
        if p > 1 and not self.pipeline:
            return f"{self.key} has no pipeline parallelism (p must be 1)"
        if zero not in self.zero:
            return f"{self.key} has no ZeRO stage {zero} (it offers {', '.join(map(str, self.zero))})"
        if recompute not in self.recompute:
            return f"{self.key} has no {recompute} recompute (it offers {', '.join(self.recompute)})"
        if sequence_parallel and not self.sequence_parallel:
            return f"{self.key} has no sequence parallelism"
        if v > 1 and not self.interleaving:
            return f"{self.key} has no interleaved schedule (v must be 1)"
        return None

    def features(self) -> str:
        """The feature set in one line, for reports."""
        return (f"{'' if self.pipeline else 'no pipeline; '}ZeRO {'/'.join(map(str, self.zero))}; recompute {'/'.join(self.recompute)}; sequence parallelism "
                f"{'yes' if self.sequence_parallel else 'no'}; interleaving {'yes' if self.interleaving else 'no'}; "
                f"DP reduction {'overlapped' if self.ovl_dp else 'after the backward'}; backward TP all-reduce "
                f"{'overlapped with the weight gradient' if self.ovl_tp else 'blocking'}; p2p "
                f"{'serialised' if self.p2p_serial else 'batched'}{', gradients sent whole' if self.p2p_grad_whole else ''}"
                f"{'; gradients added into fp32 after every micro-batch' if self.grad_fp32 else ''}"
                f"{''.join('; also holds ' + key + ' all run long' for key in self.resident_states)}")


FRAMEWORKS: dict[str, Framework] = {framework.key: framework for framework in (
    Framework("default", "DP reduction overlapped with the last backward, TP all-reduces blocking, batched p2p, every feature "
              "(issue 16's reference model)", ovl_dp=1, ovl_tp=0, p2p_serial=0, lora=True),
    Framework("megatron-lm-2021", "Megatron-LM as Narayanan et al. 2021 ran it (April 2021 release): local DDP all-reduce after "
              "the backward, blocking TP, batched p2p with scatter/gather; no ZeRO, no selective recompute, no sequence parallelism",
              ovl_dp=0, ovl_tp=0, p2p_serial=0, zero=(0,), recompute=("none", "full"), sequence_parallel=False,
              step_states="memory.model_states.grad_buffers"),
    Framework("megatron-lm-2021-torch", "Megatron-LM 2021 with --DDP-impl torch (Table 1's runs without a pipeline; the code "
              "refuses it with one): PyTorch DDP all-reduces the gradients in buckets under the last micro-batch's backward, "
              "the buckets a second 16-bit copy of the gradients; otherwise megatron-lm-2021", ovl_dp=1, ovl_tp=0, p2p_serial=0, zero=(0,), recompute=("none", "full"),
              sequence_parallel=False, interleaving=False, pipeline=False, step_states="memory.model_states.grad_buffers",
              resident_states=("memory.ddp.buckets",)),
    Framework("megatron-lm-2022", "Megatron-LM as Korthikanti et al. 2022 ran it: backward TP all-reduce overlapped with the "
              "weight gradient, DP all-reduce after the backward, batched p2p; no ZeRO", ovl_dp=0, ovl_tp=1, p2p_serial=0,
              zero=(0,)),
    Framework("deepspeed-pipe", "Megatron-DeepSpeed on DeepSpeed's PipelineEngine from v0.5.4 in bf16 (BLOOM): plain 1F1B, "
              "serialised blocking p2p of 1/t slices, each micro-batch's gradients added into fp32 (BF16_Optimizer), "
              "gradient reduction after the last micro-batch, ZeRO 0-1, blocking TP",
              ovl_dp=0, ovl_tp=0, p2p_serial=1, grad_fp32=1, zero=(0, 1), recompute=("none", "full"),
              sequence_parallel=False, interleaving=False, resident_states=("memory.bf16.fp32_grads",)),
    Framework("deepspeed-pipe-2021", "DeepSpeed's PipelineEngine before v0.5.4 (MT-NLG): as deepspeed-pipe, but each TP rank "
              "sends the stage's input gradient whole", ovl_dp=0, ovl_tp=0, p2p_serial=1, p2p_grad_whole=1, grad_fp32=1,
              zero=(0, 1), recompute=("none", "full"), sequence_parallel=False, interleaving=False,
              resident_states=("memory.bf16.fp32_grads",)),
)}
DEFAULT = FRAMEWORKS["default"]


def framework(key: str) -> Framework:
    """The framework of that name; KeyError (naming the choices) for any other."""
    try:
        return FRAMEWORKS[key]
    except KeyError:
        raise KeyError(f"unknown framework {key!r}: choose one of {', '.join(FRAMEWORKS)}") from None
