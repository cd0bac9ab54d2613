"""Training frameworks as the performance model sees them: what each overlaps, and which features it has.

The layout (t, p, d, b, m, v) and the settings (ZeRO stage, recompute, sequence parallelism) say
*what* runs; the framework says *how*: five switches of formulas/topics/performance.py, each read off
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

from dataclasses import dataclass, field

RECOMPUTE_ALL = ("none", "selective", "full")
STATES = ("memory.states", "memory.states.stage1", "memory.states.stage2", "memory.states.stage3")  # by ZeRO stage
BLOCKS = ("megatron", "transformers", "amp")  # whose layers, head and loss the activations are measured on


@dataclass(frozen=True)
class Holdings:
    """What a framework keeps in memory (formulas/topics/framework_memory.py), each read off its code; ``sources`` says where.

    ``weights``, ``grads``, ``optimizer``: q_W, q_G, q_O bytes per parameter; ``states``: the formula of each ZeRO stage
    it offers; ``step``: what its optimizer step adds (a partition formula, of the GPU's parameters); ``gathered``: by
    ZeRO stage, what the forward and backward hold besides the states (ZeRO-3's and FSDP's gathered units, autocast's
    weight casts); ``blocks``: the layers whose saved tensors are measured (Megatron's reference blocks, transformers'
    in bf16, or under autocast); ``glu_fused``: SwiGLU one fused kernel; ``mtp``: it builds the multi-token-prediction
    modules; ``expert_tp``: the experts' tensor parallelism may be set apart from t; ``resident_needs_dp``: its
    resident buffers (DDP's buckets) exist only with more than one data-parallel rank."""

    weights: int
    grads: int
    optimizer: int
    sources: str
    blocks: str = "megatron"
    glu_fused: int = 0
    mtp: bool = False
    expert_tp: bool = False
    states: tuple[str, ...] = STATES
    step: str | None = None
    gathered: dict[int, str] = field(default_factory=dict)
    resident_needs_dp: bool = False

    def __post_init__(self) -> None:
        if self.blocks not in BLOCKS:
            raise ValueError(f"blocks must be one of {', '.join(BLOCKS)}")

    def switches(self) -> dict[str, int]:
        """The values of the memory formulas' framework symbols."""
        return {"q_p": self.weights, "q_g": self.grads, "q_o": self.optimizer, "glu_fused": self.glu_fused}

    def words(self) -> str:
        """What it keeps, in one line."""
        precision = {2: "16-bit", 4: "fp32"}
        blocks = {"megatron": "Megatron's blocks, head and vocabulary-parallel loss",
                  "transformers": "transformers' modules in bf16", "amp": "transformers' modules under bf16 autocast"}[self.blocks]
        return (f"{precision[self.weights]} weights, {precision[self.grads]} gradients, {self.optimizer} bytes of Adam state "
                f"per parameter ({self.weights + self.grads + self.optimizer} in all); {blocks}; SwiGLU "
                f"{'fused' if self.glu_fused else 'unfused'}" + ("; builds the MTP modules" if self.mtp else "")
                + ("; expert TP settable" if self.expert_tp else "")
                + (f"; its step adds {self.step}" if self.step else "")
                + "".join(f"; ZeRO {stage} also holds {formula_id} in the passes" for stage, formula_id in sorted(self.gathered.items())))


MEGATRON_LM = Holdings(2, 2, 12, "Megatron-LM's fp16/bf16 optimizer: 16-bit weights and gradients, fp32 master weights and "
                       "Adam moments; its blocks as tests/megatron_block.py (dropout masks as the model trains, GELU or an "
                       "unfused SwiGLU); the head and mpu.vocab_parallel_cross_entropy on the last stage, the embedding on "
                       "the first")
MEGATRON_CORE = Holdings(
    2, 4, 12,
    "Megatron Core at d98e8a64: --bf16 keeps fp32 main gradients (megatron/training/arguments.py L1204–1217: "
    "accumulate_allreduce_grads_in_fp32 unless --grad-reduce-in-bf16; param_and_grad_buffer.py L924 the grad dtype) in a "
    "whole buffer beside the whole bf16 parameter buffer (param_and_grad_buffer.py L1180–1195); the distributed optimizer "
    "(ZeRO 1) shards only the fp32 main parameters and Adam's moments (distrib_optimizer.py L347–470, "
    "docs/user-guide/features/dist_optimizer.md: 6 + 12/d); ZeRO 2 and 3 are Megatron-FSDP's optim_grads and "
    "optim_grads_params (arguments.py --data-parallel-sharding-strategy; its gathered units are not priced); SwiGLU "
    "fused by default (--no-bias-swiglu-fusion turns it off, arguments.py L2895–2898; mlp.py L308–317, "
    "moe/experts.py L963–971: weighted_bias_swiglu_impl); dropout as the model trains; the MTP modules "
    "(--mtp-num-layers) on the last stage; --expert-tensor-parallel-size (model_parallel_config.py: t by default); "
    "the optimizer step adds nothing (the fp32 main grads are the shards' .grad)",
    glu_fused=1, mtp=True, expert_tp=True)
DEEPSPEED = Holdings(
    2, 2, 12,
    "DeepSpeed 0.16.5 ZeRO in bf16 (38327e07): the 16-bit gradients in the model dtype when ZeRO is on (engine.py "
    "get_data_types), partitioned from stage 2; the step casts the rank's gradient partition to fp32 beside them "
    "(stage_1_and_2.py L1885–1921); ZeRO-3 gathers a module's 16-bit weights and gradients (its estimator's 4·largest "
    "layer, stage3.py L3008–3044); Megatron-DeepSpeed's blocks (unfused SwiGLU); the pipeline engine refuses ZeRO 2 and 3 "
    "(pipe/engine.py L77–78)",
    step="memory.deepspeed.step_fp32_grads", gathered={3: "memory.zero3.gathered"})
FSDP = Holdings(
    4, 4, 8,
    "PyTorch FSDP with MixedPrecision(param_dtype=bf16) around transformers' modules: the sharded parameters kept in "
    "fp32 for the optimizer, the gradients upcast to fp32 after the backward (keep_low_precision_grads=False), Adam's "
    "moments of the fp32 shard (fsdp/api.py MixedPrecision, ShardingStrategy); ZeRO 3 is FULL_SHARD (the current and "
    "prefetched units' bf16 parameters and the current unit's gradients gathered, BackwardPrefetch.BACKWARD_PRE), ZeRO 2 "
    "SHARD_GRAD_OP (the bf16 parameters stay unsharded from the forward to the backward), ZeRO 0 NO_SHARD (a bf16 copy "
    "for the passes)",
    blocks="transformers", states=("memory.states", "memory.states.stage3", "memory.states.stage3", "memory.states.stage3"),
    gathered={0: "memory.model_states.inference", 2: "memory.model_states.inference", 3: "memory.fsdp.gathered"})
HF_TRAINER = Holdings(
    4, 4, 8,
    "the Hugging Face Trainer with bf16=True on a model loaded in fp32 (transformers docs, model_memory_anatomy.md at "
    "7d5e65fe: 'mixed precision … 6 bytes' for the weights, 4 for the gradients, 8 for AdamW): torch.autocast keeps the "
    "fp32 model and casts each nn.Linear's weight to bf16 for the passes (memory.amp.weight_casts, measured), the "
    "gradients fp32; DDP (through accelerate, gradient_as_bucket_view=False) adds an fp32 copy of the gradients in its "
    "buckets when there is more than one process; transformers' eager modules under autocast (measured)",
    blocks="amp", gathered={0: "memory.amp.weight_casts"}, resident_needs_dp=True)


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
    holds: Holdings = MEGATRON_LM  # what it keeps in memory
    tensor: bool = True  # False: t must be 1
    pipeline_zero: int = 3  # the highest ZeRO stage it runs with p > 1

    def __post_init__(self) -> None:
        if self.p2p_grad_whole and not self.p2p_serial:  # perf.pp.p2p's condition
            raise ValueError(f"{self.key}: a whole gradient is priced for serialised p2p only")

    def switches(self) -> dict[str, int]:
        """The values of the performance model's framework symbols."""
        return {"ovl_dp": self.ovl_dp, "ovl_tp": self.ovl_tp, "p2p_serial": self.p2p_serial, "p2p_grad_whole": self.p2p_grad_whole,
                "grad_fp32": self.grad_fp32}

    def lacks(self, zero: int, recompute: str, sequence_parallel: bool, v: int, p: int = 1, t: int = 1,
              expert_tp: int | None = None) -> str | None:
        """The first feature of a layout this framework does not have, in words, or None."""
        if p > 1 and not self.pipeline:
            return f"{self.key} has no pipeline parallelism (p must be 1)"
        if t > 1 and not self.tensor:
            return f"{self.key} has no tensor parallelism (t must be 1)"
        if zero not in self.zero:
            return f"{self.key} has no ZeRO stage {zero} (it offers {', '.join(map(str, self.zero))})"
        if p > 1 and zero > self.pipeline_zero:
            return (f"{self.key} has no ZeRO {zero} with pipeline parallelism (DeepSpeed's pipeline engine refuses ZeRO 2 "
                    f"and 3: ZeRO 0-{self.pipeline_zero} with p > 1)")
        if expert_tp is not None and expert_tp != t and not self.holds.expert_tp:
            return f"{self.key} splits an expert over the t tensor-parallel ranks (no separate expert tensor parallelism)"
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

    def lacks_model(self, model: dict[str, int]) -> str | None:
        """Why this framework's measured blocks do not cover the model (transformers' forms: the dense Llama family)."""
        if self.holds.blocks == "megatron":
            return None
        if model.get("l_moe") or model.get("mla"):
            return (f"{self.key} prices transformers' own modules, measured for dense Llama-family layers only: not "
                    f"{'multi-head latent attention' if model.get('mla') else 'mixture-of-experts layers'}")
        if model.get("norm_bias", 0) or model.get("pos_table", 0) or model.get("drop", 0):
            return (f"{self.key} prices transformers' Llama-family modules (RMSNorm, rotary positions, no dropout); this "
                    "model's block is another")
        return None


FRAMEWORKS: dict[str, Framework] = {framework.key: framework for framework in (
    Framework("default", "a current Megatron Core job: DP reduction overlapped with the last backward, TP all-reduces "
              "blocking, batched p2p, every feature (issue 16's reference model); bf16 weights with fp32 main gradients, "
              "the distributed optimizer at ZeRO 1, fused SwiGLU", ovl_dp=1, ovl_tp=0, p2p_serial=0, lora=True,
              holds=MEGATRON_CORE),
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
    Framework("deepspeed", "DeepSpeed ZeRO 1-3 in bf16 (Megatron-DeepSpeed's blocks): 16-bit gradients, the step's fp32 "
              "gradient partition, ZeRO-3's gathered module; gradient reduction after the backward, blocking TP",
              ovl_dp=0, ovl_tp=0, p2p_serial=1, zero=(1, 2, 3), sequence_parallel=False, interleaving=False,
              holds=DEEPSPEED, pipeline_zero=1),
    Framework("fsdp", "PyTorch FSDP around transformers' modules, bf16 mixed precision: fp32 sharded parameters, "
              "gradients and Adam states; ZeRO 0/2/3 as NO_SHARD/SHARD_GRAD_OP/FULL_SHARD; no TP or pipeline",
              ovl_dp=1, ovl_tp=0, p2p_serial=0, zero=(0, 2, 3), recompute=("none", "full"), sequence_parallel=False,
              interleaving=False, pipeline=False, tensor=False, holds=FSDP),
    Framework("hf-trainer", "the Hugging Face Trainer (transformers' eager modules, bf16 autocast on an fp32 model, DDP): "
              "16 bytes per parameter, the bf16 weight casts during the passes, DDP's fp32 buckets; no ZeRO, TP or pipeline",
              ovl_dp=1, ovl_tp=0, p2p_serial=0, zero=(0,), recompute=("none", "full"), sequence_parallel=False,
              interleaving=False, pipeline=False, tensor=False, resident_states=("memory.ddp.buckets.fp32",),
              holds=HF_TRAINER),
)}
ALIASES = {"megatron-core": "default"}  # the default framework by what it is
DEFAULT = FRAMEWORKS["default"]


def framework(key: str) -> Framework:
    """The framework of that name; KeyError (naming the choices) for any other."""
    try:
        return FRAMEWORKS[ALIASES.get(key, key)]
    except KeyError:
        raise KeyError(f"unknown framework {key!r}: choose one of {', '.join(FRAMEWORKS)}") from None
