"""``llm-formulas estimate``: the training and inference report (formulas/reports/estimate.py).

    llm-formulas estimate --model llama2-70b --gpu a100-80gb --tp 8 --pp 4 --dp 2 \\
        --micro-batch 1 --global-batch 32 --seq 4096 --tokens 2e12

Readable tables by default, ``--json`` for one document (numbers as floats,
integers where exact). An impossible layout is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from llm_formulas.render.cli.model_commands import add_model_source, load_architecture
from llm_formulas.render.cli.numbers import InputError, parse_fraction, printable, quote
from llm_formulas.render.cli.result import Result, number_json

if TYPE_CHECKING:
    from llm_formulas.formulas.reports.estimate import Inputs, Layout
    from llm_formulas.formulas.data.gpu_specs import GPUSpec
    from llm_formulas.formulas.data.gpus import GPU

RECOMPUTE_CHOICES = ("none", "selective", "full")  # formulas.reports.estimate.RECOMPUTE_MODES, named here so --help loads no SymPy
ATTENTION_CHOICES = ("eager", "flash")  # formulas.reports.estimate.ATTENTION_KERNELS
FRAMEWORK_CHOICES = ("default", "megatron-core", "megatron-lm-2021", "megatron-lm-2021-torch", "megatron-lm-2022", "deepspeed-pipe",
                     "deepspeed-pipe-2021", "deepspeed", "fsdp", "hf-trainer")  # formulas.data.frameworks.FRAMEWORKS and ALIASES
TOKENS_PER_PARAMETER = 20  # formulas.reports.estimate.TOKENS_PER_PARAMETER (Hoffmann et al. 2022), the default D

DEFAULTS = {"overlap": "0.5", "network": "25"}  # r = 1/2 (with --mfu); 200 Gb/s per GPU


def add_source_arguments(command: argparse.ArgumentParser) -> None:
    """--hf-config | --model, and --gpu (shared with ``plan``)."""
    add_model_source(command)
    command.add_argument("--gpu", required=True, metavar="GPU", help="GPU preset, e.g. a100-80gb or h100-sxm (an unknown name lists them all)")


def add_assumption_arguments(command: argparse.ArgumentParser) -> None:
    """--seq, --tokens, --mfu, --overlap, --network (shared with ``plan``)."""
    command.add_argument("--seq", required=True, metavar="S", help="sequence length s in tokens")
    command.add_argument("--tokens", metavar="D", help="training tokens (default 20 per parameter)")
    command.add_argument("--mfu", metavar="U", help="assume this model FLOPs utilization instead of predicting the step time "
                                                      "(000 §3.5 uses 0.5); without it MFU and HFU are predicted")
    command.add_argument("--overlap", default=DEFAULTS["overlap"], metavar="R",
                         help="with --mfu: share of compute time that communication may hide under (default 0.5)")
    command.add_argument("--attention", default="eager", choices=ATTENTION_CHOICES,
                         help="attention kernel: eager stores and moves the s×s scores, flash (FlashAttention) neither "
                              "(memory and predicted time; default eager)")
    command.add_argument("--flash-attention", dest="attention", action="store_const", const="flash",
                         help="the same as --attention flash")
    command.add_argument("--framework", default="default", choices=FRAMEWORK_CHOICES,
                         help="the implementation priced: what it keeps in memory (formulas/data/frameworks.py Holdings), what "
                              "the predicted step time assumes and the features plan may use: default = megatron-core (a "
                              "current Megatron Core job: bf16 weights, fp32 main gradients, 18 bytes per parameter, the "
                              "distributed optimizer at ZeRO 1, fused SwiGLU; DP all-reduce overlapped, TP blocking, every "
                              "feature), deepspeed (ZeRO 1-3 in bf16: 16-bit gradients, the step's fp32 gradient partition, "
                              "ZeRO-3's gathered module), fsdp (PyTorch FSDP around transformers' modules: fp32 shards, "
                              "ZeRO 0/2/3, no TP or pipeline), hf-trainer (the Hugging Face Trainer: autocast on an fp32 "
                              "model, DDP, no ZeRO, TP or pipeline), megatron-lm-2021 (Narayanan et al. 2021's "
                              "code: no ZeRO, no selective recompute or sequence parallelism, DP all-reduce after the backward), "
                              "megatron-lm-2021-torch (the same with --DDP-impl torch, without a pipeline: DP all-reduce under the "
                              "last backward, DDP's buckets a second copy of the gradients), "
                              "megatron-lm-2022 (Korthikanti et al.: backward TP all-reduce overlapped with the weight gradient), "
                              "deepspeed-pipe (DeepSpeed's pipeline engine in bf16, as BLOOM ran it: 1F1B only, serialised p2p, "
                              "ZeRO 0-1, every micro-batch's gradients added into fp32 ones kept all run long), deepspeed-pipe-2021 "
                              "(the same before v0.5.4, as MT-NLG ran it: gradients sent whole between stages); only default "
                              "models --finetune")
    command.add_argument("--network", default=DEFAULTS["network"], metavar="GB/s",
                         help="inter-node bandwidth per GPU for PP and DP traffic, GB/s (default 25 = 200 Gb/s)")
    command.add_argument("--precision", default="bf16", choices=("bf16", "fp8"),
                         help="training precision: bf16, or fp8 (Transformer Engine's recipe: FP8 weight copies, FP8 GEMM inputs)")
    command.add_argument("--finetune", default="none", choices=("none", "lora", "qlora"),
                         help="full training (default), LoRA on a frozen base, or QLoRA on a 4-bit NF4 base")
    command.add_argument("--lora-rank", metavar="R", help="LoRA rank r (default 16)")
    command.add_argument("--lora-targets", metavar="NAMES",
                         help="comma-separated projections that carry adapters (default q_proj,v_proj, PEFT's for Llama)")
    command.add_argument("--base-bits", choices=("16", "8", "4"),
                         help="bits of the frozen base's projection weights (default 16 for lora, 4 for qlora)")


def add_arguments(command: argparse.ArgumentParser) -> None:
    add_source_arguments(command)
    command.add_argument("--gpus", metavar="N", help="GPUs in all (default t·p·c·d)")
    command.add_argument("--tp", default="1", metavar="T", help="tensor parallel degree t (default 1)")
    command.add_argument("--pp", default="1", metavar="P", help="pipeline parallel degree p (default 1)")
    command.add_argument("--dp", default="1", metavar="D", help="data parallel degree d (default 1)")
    command.add_argument("--interleave", default="1", metavar="V", help="virtual pipeline stages per GPU v (default 1)")
    command.add_argument("--ep", default="1", metavar="E", help="expert parallel degree e: divides the experts and d (default 1)")
    command.add_argument("--cp", default="1", metavar="C", help="context parallel degree c: divides the sequence; n = t·p·c·d (default 1)")
    command.add_argument("--expert-tp", metavar="T_E",
                         help="expert tensor parallel degree t_E, dividing t (Megatron Core's --expert-tensor-parallel-size; "
                              "default t; DeepSeek-V3 trained with 1); t_E < t needs --sequence-parallel")
    command.add_argument("--micro-batch", default="1", metavar="B", help="micro-batch size b in sequences (default 1)")
    batch = command.add_mutually_exclusive_group()
    batch.add_argument("--micro-batches", metavar="M", help="micro-batches per iteration m")
    batch.add_argument("--global-batch", metavar="B", help="global batch in sequences (a multiple of b·d)")
    command.add_argument("--zero", default="0", choices=["0", "1", "2", "3"], help="ZeRO stage (default 0)")
    command.add_argument("--recompute", default="selective", choices=RECOMPUTE_CHOICES, help="activation recompute (default selective)")
    command.add_argument("--recompute-layers", metavar="K",
                         help="with --recompute full: recompute only K layers of each model chunk of l/(p·v), the others "
                              "store everything (Megatron-LM's --recompute-method block --recompute-num-layers K; a partial "
                              "rematerialization as PaLM's); default all")
    command.add_argument("--sequence-parallel", action="store_true", help="Megatron sequence parallelism")
    command.add_argument("--achieved", metavar="TFLOPS", help="a measured per-GPU rate in TFLOP/s: U = achieved / peak (instead of --mfu)")
    command.add_argument("--pue", default="1.1", metavar="PUE", help="power usage effectiveness (default 1.1, LLaMA §6)")
    command.add_argument("--carbon-intensity", default="385", metavar="G_PER_KWH", help="grid carbon intensity, g CO2eq/kWh (default 385, LLaMA §6)")
    command.add_argument("--price", default="2", metavar="USD", help="rental price per GPU-hour in $ (default 2, DeepSeek-V3 Table 1)")
    command.add_argument("--layout", metavar="NAME", help="a published layout: bloom-176b (TP 4 × PP 12 × DP 8, uneven stages); other layout options must stay unset")
    command.add_argument("--stages", metavar="L1,L2,...", help="layers of each pipeline stage, first to last (p of them, summing to l)")
    command.add_argument("--embedding-stages", metavar="first,last", help="stages that hold the embedding matrix: first, last or stage numbers")
    add_assumption_arguments(command)


def chosen_spec(name: str) -> GPUSpec:
    """The figures of the GPU preset called ``name`` as plain numbers (no SymPy); bad input lists the known presets."""
    from llm_formulas.formulas.data.gpu_specs import SPECS

    if name not in SPECS:
        raise InputError(f"unknown GPU {quote(name)}; known: {', '.join(sorted(SPECS))}")
    return SPECS[name]


def chosen_gpu(name: str) -> GPU:
    """The GPU preset called ``name`` with exact SymPy figures and its sources; bad input lists the known presets."""
    from llm_formulas.formulas.data.gpus import PRESETS

    return PRESETS[chosen_spec(name).key]


def read_model(hf_config: str | None, model: str | None) -> tuple[dict[str, int], str, str]:
    """The model's values by symbol name, its model_type and a label, refused in one line where the report cannot
    price it (``check_model``): a preset's as plain numbers without SymPy (formulas/data/preset_values.json), a config.json's
    through the readers."""
    from llm_formulas.formulas.data.presets import names, preset

    if model is not None and model in names():
        chosen = preset(model)
        read = chosen.read
        values, model_type, towers, label = read["values"], read["model_type"], tuple(read["towers"]), chosen.title
    else:
        from llm_formulas.formulas.reports.estimate import model_values

        architecture, label = load_architecture(hf_config, model)
        values, model_type = model_values(architecture.values), architecture.model_type
        towers = tuple(dict.fromkeys(piece.component for piece in architecture.towers))
    check_model(towers, values)
    return values, model_type, label


LAYOUT_OPTIONS = {"tp": "1", "pp": "1", "dp": "1", "stages": None, "embedding_stages": None, "micro_batch": "1",
                  "global_batch": None, "micro_batches": None, "zero": "0", "recompute": "selective",
                  "recompute_layers": None}


def apply_layout_preset(args: argparse.Namespace) -> None:
    """--layout NAME: the published layout's options, refused beside explicit ones."""
    from llm_formulas.formulas.data.layouts import LAYOUTS

    if args.layout not in LAYOUTS:
        raise InputError(f"unknown layout {quote(args.layout)}; known: {', '.join(sorted(LAYOUTS))}")
    given = [name for name, default in LAYOUT_OPTIONS.items() if getattr(args, name) != default]
    if given:
        raise InputError(f"--layout {args.layout} sets the layout; drop --{given[0].replace('_', '-')}")
    preset = LAYOUTS[args.layout]
    for name in ("tp", "pp", "dp", "micro_batch", "global_batch", "zero"):
        setattr(args, name, str(getattr(preset, name)))
    args.stages = ",".join(map(str, preset.stages))
    args.embedding_stages, args.recompute = preset.embedding_stages, preset.recompute
    if args.tokens is None:
        args.tokens = preset.tokens


def read_layout(args: argparse.Namespace) -> Layout:
    from llm_formulas.formulas.vocabulary.bounds import bound_violation
    from llm_formulas.formulas.reports.estimate import Layout
    from llm_formulas.render.cli.inputs import parse_count

    if getattr(args, "layout", None) is not None:
        apply_layout_preset(args)
    t, p, d = parse_count(args.tp, "t"), parse_count(args.pp, "p"), parse_count(args.dp, "d")
    b = parse_count(args.micro_batch, "b")
    if args.global_batch is not None:
        global_batch = parse_count(args.global_batch, "B")
        if global_batch % (b * d):
            raise InputError(f"the global batch {global_batch} must be a multiple of b·d = {b * d}")
        m = global_batch // (b * d)
    else:
        m = parse_count(args.micro_batches or "1", "m")
    e, c = parse_count(args.ep, "e"), parse_count(args.cp, "c")
    n = parse_count(args.gpus, "n") if args.gpus is not None else t * p * c * d
    for name, value in (("n", n), ("B", b * m * d)):  # the degrees within their bounds, their products too
        beyond = bound_violation(name, value)
        if beyond is not None:
            raise InputError(f"invalid layout: {beyond}")
    stages = read_stages(args.stages) if args.stages is not None else None
    embedding = read_embedding_stages(args.embedding_stages, p) if args.embedding_stages is not None else ()
    if embedding and stages is None:
        raise InputError("--embedding-stages needs --stages")
    return Layout(
        n=n, t=t, p=p, d=d, b=b, m=m, s=parse_count(args.seq, "s"), v=parse_count(args.interleave, "v"),
        zero=int(args.zero), recompute=args.recompute, sequence_parallel=args.sequence_parallel, attention=args.attention,
        e=e, c=c, stages=stages, embedding_stages=embedding,
        recompute_layers=None if args.recompute_layers is None else read_recompute_layers(args.recompute_layers),
        expert_tp=None if getattr(args, "expert_tp", None) is None else parse_count(args.expert_tp, "t_e"),
    )


def read_recompute_layers(text: str) -> int:
    """``--recompute-layers K``: a whole number of layers, 0 or more (its upper bound is the layout's, checked there)."""
    from llm_formulas.render.cli.inputs import parse_number

    value = parse_number(text, "--recompute-layers")
    if value < 0 or not value.is_integer:
        raise InputError(f"--recompute-layers must be a whole number of layers, 0 or more, got {quote(text)}")
    return int(value)


def read_stages(text: str) -> tuple[int, ...]:
    """``5,6,...,5``: whole layer counts, each at least 1 (an empty stage is named); more stages than a pipeline may
    have (formulas.vocabulary.bounds.MAX_STAGES) are refused before any is read."""
    from llm_formulas.formulas.vocabulary.bounds import stages_violation

    too_many = stages_violation(text.count(",") + 1)
    if too_many is not None:
        raise InputError(too_many)
    counts = []
    for index, item in enumerate(text.split(","), start=1):
        value = parse_fraction(item, f"--stages (stage {index})")  # a Fraction: 10,000 of them in 0.1 s
        if value < 0 or value.denominator != 1:
            raise InputError(f"--stages: stage {index} must hold a whole number of layers, got {quote(item)}")
        if value == 0:
            raise InputError(f"--stages: stage {index} of the partition is empty")
        counts.append(int(value))
    return tuple(counts)


def read_embedding_stages(text: str, p: int) -> tuple[int, ...]:
    """``first,last`` or 1-based stage numbers, as 0-based indices."""
    indices = []
    for item in text.split(","):
        word = item.strip().lower()
        if word in ("first", "last"):
            indices.append(0 if word == "first" else p - 1)
        elif word.isdigit() and 1 <= int(word) <= p:
            indices.append(int(word) - 1)
        else:
            raise InputError(f"--embedding-stages: {quote(item)} is not first, last or a stage number from 1 to {p}")
    return tuple(sorted(set(indices)))


def read_lora(args: argparse.Namespace, model: dict[str, int], model_type: str) -> dict[str, object] | None:
    """--finetune, --lora-rank, --lora-targets, --base-bits as formulas/topics/precision.py's values (None: full training)."""
    if args.finetune == "none":
        for option, given in (("--lora-targets", args.lora_targets), ("--lora-rank", args.lora_rank), ("--base-bits", args.base_bits)):
            if given is not None:
                raise InputError(f"{option} needs --finetune lora or qlora")
        return None
    from llm_formulas.formulas.topics.precision import LoraError, lora_inputs  # its formulas take 0.4 s to build: only for a fine-tune
    from llm_formulas.render.cli.inputs import parse_count
    bits = int(args.base_bits) if args.base_bits is not None else (16 if args.finetune == "lora" else 4)
    if args.finetune == "qlora" and bits != 4:
        raise InputError(f"QLoRA's base is 4-bit NF4, not {bits}-bit: use --finetune lora --base-bits {bits}")
    targets = tuple(name.strip() for name in (args.lora_targets or "q_proj,v_proj").split(",") if name.strip())
    try:
        return lora_inputs(model_type, model, parse_count(args.lora_rank or "16", "r_lora"), targets, bits)
    except LoraError as error:
        raise InputError(str(error)) from None


def read_inputs(args: argparse.Namespace, model: dict[str, int], model_type: str = "") -> Inputs:
    """The GPU and the assumptions (--mfu, --overlap, --network, --tokens, precision, fine-tuning) as exact Fractions,
    read without SymPy (formulas.reports.estimate.exact_inputs makes them SymPy's for the exact report); without --mfu the
    GPU's performance constants (one line and exit 2 for a GPU that has none)."""
    from llm_formulas.formulas.data.calibration import NoCalibration, efficiency
    from llm_formulas.formulas.data.frameworks import framework
    from llm_formulas.formulas.data.gpu_specs import NODE_SIZE
    from llm_formulas.formulas.reports.estimate import Inputs
    from llm_formulas.render.cli.inputs import checked, parse_exact

    preset = chosen_spec(args.gpu)
    if args.precision == "fp8" and preset.fp8 is None:  # Transformer Engine's recipe runs its GEMMs on FP8 tensor cores
        raise InputError(f"--precision fp8: the {preset.name} has no FP8 tensor cores (use --precision bf16)")
    utilization = None if args.mfu is None else parse_exact(args.mfu, "U", "--mfu")
    if getattr(args, "achieved", None) is not None:  # a measured per-GPU rate: U = achieved / peak
        if utilization is not None:
            raise InputError("give --mfu or --achieved, not both")
        achieved = checked("X_run", parse_fraction(args.achieved, "--achieved") * 10**12)
        if achieved > preset.flops():  # named as typed: the U it implies is no flag of the user's
            raise InputError(f"--achieved {printable(args.achieved)} TFLOP/s is above the {preset.name}'s peak of "
                             f"{float(preset.flops()) / 10**12:g} TFLOP/s")
        utilization = checked("U", achieved / preset.flops())
    performance = None
    if utilization is None:
        try:
            performance = efficiency(args.gpu)
        except NoCalibration as error:
            raise InputError(str(error)) from None
    overlap = parse_exact(args.overlap, "r", "--overlap")
    network = parse_fraction(args.network, "--network") * 10**9
    if network <= 0:
        raise InputError(f"--network must be positive, got {quote(args.network)}")
    tokens = parse_fraction(args.tokens, "--tokens", suffix_allowed=True) if args.tokens is not None else None
    if tokens is not None and tokens <= 0:
        raise InputError(f"--tokens must be positive, got {quote(args.tokens)}")
    return Inputs(
        model=model,
        gpu=preset.inputs(),
        network=network,
        tokens=tokens,
        utilization=utilization,
        overlap=overlap,
        precision=args.precision,
        lora=read_lora(args, model, model_type),
        efficiency=performance,
        node_size=NODE_SIZE[args.gpu],
        flash=args.attention == "flash",
        framework=framework(getattr(args, "framework", "default")),
    )


def read_model_and_layout(args: argparse.Namespace) -> tuple[object, str, dict[str, int], object]:
    """The model (``--model`` or ``--hf-config``) and the layout the options give, each refused in one line where the
    report cannot price it: (architecture, label, the model's sizes, layout)."""
    from llm_formulas.formulas.reports.estimate import LayoutError, check_layout, model_values

    architecture, label = load_architecture(args.hf_config, args.model)
    model = model_values(architecture.values)
    check_model(tuple(dict.fromkeys(piece.component for piece in architecture.towers)), model)
    layout = read_layout(args)
    try:
        check_layout(layout, model)
    except LayoutError as error:
        raise InputError(f"invalid layout: {error}") from None
    return architecture, label, model, layout


def run(args: argparse.Namespace) -> Result:
    from llm_formulas.formulas.reports.estimate import estimate, exact_inputs, unpredicted

    from llm_formulas.formulas.data.presets import preset

    architecture, label, model, layout = read_model_and_layout(args)
    source = preset(args.model).source if args.model is not None else None
    inputs = exact_inputs(read_inputs(args, model, architecture.model_type))
    reason = unpredicted(layout, inputs)
    if reason is not None:
        raise InputError(reason)
    check_framework(inputs.framework, layout, model)
    if inputs.lora is not None and not inputs.framework.lora:
        raise InputError(f"--finetune {args.finetune} is modelled only under --framework default, not {inputs.framework.key}")
    report = estimate(layout, inputs)
    if inputs.utilization is not None:  # an assumed U: its recomputation must stay within the GPU's peak
        beyond = peak_violation(float(report["time"]["hfu"]), given_as(args), _limit(args, report, inputs))
        if beyond is not None:
            raise InputError(beyond)
    report["footprint"] = read_footprint(args, report, layout)
    doc = {
        "model": label,
        "source": source,
        "gpu": chosen_gpu(args.gpu).name,
        "layout": {
            "n": layout.n, "t": layout.t, "p": layout.p, "d": layout.d, "v": layout.v, "b": layout.b, "m": layout.m,
            "B": layout.global_batch, "s": layout.s, "zero": layout.zero, "recompute": layout.recompute,
            "sequence_parallel": layout.sequence_parallel, "attention": layout.attention, "e": layout.e, "c": layout.c,
            "expert_tp": layout.t if layout.expert_tp is None else layout.expert_tp,
        } | ({"recompute_layers": layout.recompute_layers, "chunk_layers": model["l"] // (layout.p * layout.v)}
             if layout.recompute_layers is not None else {})
          | ({"stages": list(layout.stages), "embedding_stages": [i + 1 for i in layout.embedding_stages]} if layout.stages else {}),
        "assumptions": assumptions_json(inputs) | {"tokens_default": args.tokens is None}
                       | ({} if inputs.utilization is None else {"U_given_as": given_as(args)}),
    } | _to_json(report)
    doc["notes"] = layout_notes(args, layout)
    doc["units"] = report_units(doc)
    return Result(doc, render_text(doc))


def layout_notes(args: argparse.Namespace, layout: Layout) -> list[str]:
    """What the report assumed about the micro-batches and why it matters: m = 1 taken for want of --micro-batches or
    --global-batch (said whenever p > 1), and a bubble that dominates the step (formulas.reports.estimate.bubble_note)."""
    from llm_formulas.formulas.reports.estimate import bubble_note

    notes = []
    if layout.p > 1 and args.global_batch is None and args.micro_batches is None:
        notes.append("m = 1 micro-batch taken: neither --micro-batches nor --global-batch was given")
    bubble = bubble_note(layout.p, layout.m, layout.v)
    return notes + ([bubble] if bubble else [])


def given_as(args: argparse.Namespace) -> str:
    """The option that set U, as typed: ``--mfu 0.5``, or ``--achieved 297`` (TFLOP/s over the GPU's peak)."""
    if getattr(args, "achieved", None) is not None:
        return f"--achieved {printable(args.achieved)}"
    return f"--mfu {printable(args.mfu)}"


def peak_violation(hfu: float, given: str, limit: str) -> str | None:
    """Why an assumed utilization cannot be: its HFU, the recomputed FLOPs on top of the model's, above the GPU's
    peak (formulas.vocabulary.bounds.MAX_HFU); ``given`` names it as typed (``--mfu 1``, the page's ``U = 1``), ``limit`` the
    most it may be. None when it is within."""
    from llm_formulas.formulas.vocabulary.bounds import MAX_HFU
    from llm_formulas.render.printers.human import significant

    if hfu <= MAX_HFU:
        return None
    digits = 4
    while float(significant(100 * hfu, digits).replace(",", "")) <= 100 * MAX_HFU:  # never "100 %" for 100.004 %
        digits += 1
    return (f"{given} means HFU {significant(100 * hfu, digits)} % with the recomputed FLOPs on top: no GPU computes "
            f"above its peak; give at most {limit}")


def floor_significant(x: float, digits: int = 3) -> float:
    """``x`` > 0 rounded down to ``digits`` significant digits: a limit stated without crossing it."""
    import math

    scale = 10 ** (digits - 1 - math.floor(math.log10(x)))
    return math.floor(x * scale) / scale


def _limit(args: argparse.Namespace, report: dict, inputs: Inputs) -> str:
    """The largest U (in the option the user typed) whose HFU stays within the peak: U / HFU."""
    from llm_formulas.render.printers.human import significant

    share = float(inputs.utilization) / float(report["time"]["hfu"])
    if getattr(args, "achieved", None) is not None:
        return f"--achieved {significant(floor_significant(share * chosen_gpu(args.gpu).flops() / 10**12))}"
    return f"--mfu {significant(floor_significant(share))}"


def check_model(towers: tuple[str, ...], model: dict[str, int]) -> None:
    """One line and exit 2 for a model the report cannot price (formulas.reports.estimate.unpriced: recurrent, mixer- or
    MLP-less layers, cross-attention, an attention output gate; a multimodal checkpoint's ``towers``, its components
    counted apart)."""
    from llm_formulas.formulas.reports.estimate import unpriced

    reason = unpriced(model)
    if reason is None and towers:
        reason = ("the training report prices the language model only: this checkpoint's "
                  f"{' and '.join(component.replace('_', ' ') for component in towers)} would be left out")
    if reason is not None:
        raise InputError(f"invalid model: {reason}")


def check_framework(chosen: object, layout: Layout, model: dict[str, int]) -> None:
    """One line and exit 2 for a layout option the framework lacks (ZeRO 3 under megatron-lm-2021, TP under
    hf-trainer) or a model its measured blocks do not cover (a MoE model under transformers' modules)."""
    missing = chosen.lacks(layout.zero, layout.recompute, layout.sequence_parallel, layout.v, layout.p, layout.t,
                           layout.expert_tp) or chosen.lacks_model(model)
    if missing is not None:
        raise InputError(f"invalid layout for --framework: {missing}")


def read_footprint(args: argparse.Namespace, report: dict, layout: Layout) -> dict:
    """GPU-hours, energy, emissions and cost of the run (formulas/reports/footprint.py), the flags checked."""
    from llm_formulas.formulas.vocabulary.evaluation import check_value
    from llm_formulas.formulas.reports.footprint import footprint
    from llm_formulas.formulas.vocabulary.symbols import quantity
    from llm_formulas.render.cli.inputs import parse_number

    pue = check_value(quantity("PUE"), parse_number(args.pue, "--pue"))
    intensity = check_value(quantity("I_co2"), parse_number(args.carbon_intensity, "--carbon-intensity"))
    price = check_value(quantity("c_rent"), parse_number(args.price, "--price"))
    return footprint(report["time"]["training_days"], layout.n, chosen_gpu(args.gpu).tdp, pue, intensity, price)

# The unit of each figure of the report, by path (first matching pattern wins); --json carries them
UNITS = (
    ("params.*", "parameter"), ("flops.per_token", "FLOP/token"), ("flops.*", "FLOP"),
    ("memory.fits", "bool"), ("memory.max_micro_batch", "sequence"), ("memory.activation_formula", "formula id"),
    ("memory.most_loaded_stage", "1"), ("memory.*_stage.params", "parameter"),
    ("memory.*", "byte"), ("comms.bytes.*", "byte"), ("comms.seconds.*", "second"), ("comms.*", "byte/second"),
    ("time.*_seconds", "second"), ("time.*_days", "day"), ("time.tokens", "token"), ("time.gpu_hours", "GPU-hour"),
    ("time.tokens_per_gpu_second", "token/second"), ("time.*", "1"),
    ("inference.latency_*", "second"), ("inference.token_latency", "second"), ("inference.stage_latency", "second"),
    ("inference.experts_touched", "1"), ("inference.tokens_per_second", "token/second"),
    ("inference.sequences_in_flight", "sequence"), ("inference.balance_batch", "sequence"), ("inference.*", "byte"),
)


def report_units(doc: dict) -> dict[str, str]:
    """{"memory.total": "byte", ...} for every number of the report's sections."""
    from fnmatch import fnmatchcase

    paths = [f"{section}.{key}" if not isinstance(value, dict) else f"{section}.{key}.{inner}"
             for section in ("params", "flops", "memory", "comms", "time", "inference")
             for key, value in doc[section].items() for inner in (value if isinstance(value, dict) else [None])]
    return {path: next(unit for pattern, unit in UNITS if fnmatchcase(path, pattern)) for path in paths}


def assumptions_json(inputs: Inputs) -> dict[str, object]:
    lora = None if inputs.lora is None else {name: float(value) for name, value in inputs.lora.items()}
    common = {"network_bytes_per_second": float(inputs.network), "gpus_per_node": inputs.node_size, "bytes_per_value": 2,
              "precision": inputs.precision, "lora": lora,
              "framework": {"name": inputs.framework.key, "features": inputs.framework.features(),
                            "pipeline": inputs.framework.pipeline, "holds": inputs.framework.holds.words(),
                            "sources": inputs.framework.holds.sources} if inputs.framework else None}
    if inputs.utilization is not None:
        return {"mode": "given", "U": float(inputs.utilization), "r": float(inputs.overlap)} | common
    constants = inputs.efficiency
    return {"mode": "predicted", "flash_attention": inputs.flash, "constants": {
        "eta_gemm": float(constants.eta_gemm), "eta_mem": float(constants.eta_mem), "tau_k": float(constants.tau_k),
        "eta_link": float(constants.eta_link), "provenance": constants.provenance}} | common


def _to_json(value: object) -> object:
    if isinstance(value, dict):
        return {key: _to_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_to_json(item) for item in value]
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or type(value).__name__ in ("BooleanTrue", "BooleanFalse"):
        return bool(value)
    return number_json(value)


def _block(lay: dict) -> str:
    """Block recompute in words: how many of each chunk's layers run their forward again."""
    if "recompute_layers" not in lay:
        return ""
    return f" of {lay['recompute_layers']} layers per chunk of {lay['chunk_layers']} (block; the others store everything)"


def render_text(doc: dict) -> str:
    """The report a person reads: human units, the assumptions first, a parallel dimension of degree 1 left out."""
    from llm_formulas.render.printers.human import human, significant

    lay, assumed, params, flops = doc["layout"], doc["assumptions"], doc["params"], doc["flops"]
    memory, comms, time, inference = doc["memory"], doc["comms"], doc["time"], doc["inference"]
    name = assumed["framework"]["name"]
    zero = f"ZeRO {lay['zero']}" + (" (Megatron’s distributed optimizer)" if lay["zero"] == 1 and name == "default" else "")
    settings = [zero, f"recompute {lay['recompute']}{_block(lay)}", f"{lay['attention']} attention"]
    if lay["sequence_parallel"]:
        settings.append("sequence parallel")
    settings.append(_training(assumed))
    tokens = f"{human(time['tokens'], '1')} tokens" + (f" ({TOKENS_PER_PARAMETER} per parameter)" if assumed["tokens_default"] else "")
    if assumed["mode"] == "given":
        speed = f"MFU U = {_percent(assumed['U'])} (given), communication hidden under {_percent(assumed['r'])} of compute"
    else:
        speed = f"step time predicted from the GPU's performance constants ({assumed['constants']['provenance']})"
        if assumed["framework"]["name"] != "default":
            speed += f" in the framework {assumed['framework']['name']} ({assumed['framework']['features']})"
    lines = [f"{doc['model']} on {lay['n']} × {doc['gpu']}"]
    if doc.get("source"):
        lines.append(f"  source: {doc['source']}")
    lines += [
        f"layout: t={lay['t']} p={lay['p']} d={lay['d']} v={lay['v']}"
        + "".join(f" {name}={lay[name]}" for name in ("e", "c") if lay[name] > 1) + f"  b={lay['b']} m={lay['m']} B={lay['B']} s={lay['s']}  "
        + ", ".join(settings),
        f"assumes: {speed}, {tokens}, network {human(assumed['network_bytes_per_second'], 'byte/second')} per GPU "
        f"(PP, DP), {assumed['gpus_per_node']} GPUs per node, bf16 activations (2 bytes)",
        f"prices: {'Megatron Core' if name == 'default' else name} — {assumed['framework']['holds']}",
        *(f"note: {note}" for note in doc.get("notes", ())),
        "",
        "parameters",
        f"  total {human(params['total'], '1')}   active {human(params['active'], '1')}   "
        f"per GPU {human(params['per_gpu_stored'], '1')}" + (" (ZeRO-3 shard)" if lay["zero"] == 3 and lay["d"] > 1 else "")
        + (f"   trainable {human(params['trainable'], '1')}" if assumed["lora"] else ""),
        "FLOPs per iteration",
        f"  forward {human(flops['forward'], 'FLOP')}   backward {human(flops['backward'], 'FLOP')}   "
        f"training {human(flops['training'], 'FLOP')}   recomputed {human(flops['recomputed'], 'FLOP')}",
        f"memory per GPU ({_stage_name(memory['most_loaded_stage'], lay['p'])}, the most loaded)",
        f"  model states {human(memory['model_states'], 'byte')}   activations {human(memory['activations'], 'byte')} "
        f"({memory['activation_formula']})" + (f"   gathered for the passes {human(memory['gathered'], 'byte')}"
                                               if memory["gathered"] else ""),
        *([f"  first stage {human(memory['first_stage']['total'], 'byte')}, last stage "
           f"{human(memory['last_stage']['total'], 'byte')} (the output layer and loss, one micro-batch)"] if lay["p"] > 1 else []),
        f"  total {human(memory['total'], 'byte')} of {human(memory['capacity'], 'byte')}: "
        + (f"fits, {human(memory['left'], 'byte')} left" if memory["fits"]
           else f"DOES NOT FIT, {human(-memory['left'], 'byte')} over"),
        f"  largest micro-batch that fits: {_whole(memory['max_micro_batch'])}",
    ]
    degrees = {"tp": lay["t"], "pp": lay["p"], "dp": lay["d"] * lay["c"], "ep": lay["e"], "cp": lay["c"]}
    used = [dim for dim in ("tp", "pp", "dp", "ep", "cp") if degrees[dim] > 1]
    if used:
        lines.append("communication per GPU per iteration")
    for dim in used:
        need = (f"; needs {human(comms['required_bandwidth'][dim], 'byte/second')}" if dim in comms["required_bandwidth"]
                else {"ep": " (all-to-all dispatch and combine)", "cp": " (ring K/V)"}[dim])
        lines.append(
            f"  {dim.upper()}  {human(comms['bytes'][dim], 'byte')} in {human(comms['seconds'][dim], 'second')} over "
            f"{human(comms['link_bandwidth'][dim], 'byte/second')}{need}"
        )
    if "pipeline" in doc:
        stages = doc["pipeline"]
        lines += [
            "uneven pipeline stages",
            f"  layers {stages['stages']}, embedding on stages {stages['embedding_stages'] or 'none'}; first stage "
            f"{_whole(stages['first_stage_params'])} parameters; slowest stage {stages['slowest_stage']} "
            f"({max(stages['stage_work']):.3f} layer-forwards with the logits), ×{stages['step_factor']:.4f} the mean stage",
        ]
    lines += ["time", "  " + _mode_line(doc), _step_line(time, lay["t"] > 1, lay["p"] > 1, lay["d"] > 1),
        f"  {_whole(time['iterations'])} iterations for {human(time['tokens'], '1')} tokens: "
        f"{human(time['training_days'] * 86400, 'second')}, {human(time['gpu_hours'], '1')} GPU-hours, "
        f"{significant(time['tokens_per_gpu_second'])} tokens/s per GPU (6ΨD at that MFU alone: {human(time['ideal_days'] * 86400, 'second')})",
        f"inference (one replica of t·p = {lay['t'] * lay['p']} GPU{'s' if lay['t'] * lay['p'] > 1 else ''}, "
        f"batches of b = {lay['b']})",
    ]
    foot = doc["footprint"]
    lines.insert(
        len(lines) - 1,  # before the inference heading
        f"footprint: {human(foot['gpu_hours'], '1')} GPU-hours, {human(foot['cost_dollars'], 'dollar')} at "
        f"${foot['price_per_gpu_hour']:g}/GPU-hour"
        + (f", {human(foot['energy_joules'], 'joule')} at {foot['board_watts']:g} W × PUE {foot['PUE']:g}, "
           f"{human(foot['emissions_grams'], 'gram')} at {foot['carbon_intensity_g_per_kwh']:g} g/kWh" if "energy_joules" in foot else "")
    )
    in_flight = f", {_whole(inference['sequences_in_flight'])} sequences in flight" if lay["p"] > 1 else ""
    stages = (f"a stage {human(inference['stage_latency'], 'second')}, a token {human(inference['token_latency'], 'second')} "
              f"({lay['p']} stages in series)") if lay["p"] > 1 else f"a token {human(inference['token_latency'], 'second')}"
    lines.append(
        f"  KV cache {human(inference['kv_cache_per_sequence'], 'byte')} per sequence   a decoding step at {lay['s']:,} tokens "
        f"reads {human(inference['weights_read_per_step'], 'byte')} of weights and {human(inference['kv_read_per_step'], 'byte')} "
        f"of cache: {stages}   {significant(inference['tokens_per_second'])} tokens/s{in_flight}"
    )
    lines.append(
        f"  weights only (001's sketch): {human(inference['latency_memory_bound'], 'second')} a token, compute-bound from "
        f"batch {significant(inference['balance_batch'])}; llm-formulas serve prices prefill, TTFT and the KV wall"
    )
    return "\n".join(lines)


def _stage_name(stage: int, stages: int) -> str:
    """Which pipeline stage a GPU is on, in words."""
    if stages == 1:
        return "one stage"
    return "first pipeline stage" if stage == 1 else "last pipeline stage"


def _training(assumptions: dict) -> str:
    lora = assumptions["lora"]
    if lora is None:
        return f"{assumptions['precision']} training"
    targets = [name.removeprefix("lora_") for name, on in lora.items() if name.startswith("lora_") and on]
    return (f"{assumptions['precision']} LoRA r={lora['r_lora']:g} on {', '.join(targets)}, "
            f"frozen base {lora['q_base'] * 8:.4g} bits per projection weight")


def _percent(fraction: float) -> str:
    from llm_formulas.render.printers.human import significant

    return f"{significant(100 * fraction)} %"


def _step_line(time: dict, tensor: bool, piped: bool, data: bool) -> str:
    """The step split by where the time goes: the performance model's parts, or compute, bubble and what
    communication the overlap leaves exposed; a parallel dimension of degree 1 has no part."""
    from llm_formulas.render.printers.human import human

    step = f"  step {human(time['step_seconds'], 'second')}: "
    if time["mode"] == "predicted":
        parts = time["predicted"]
        shown = [f"compute {human(parts['compute_seconds'], 'second')} (at {_percent(parts['compute_efficiency'])} of peak)"]
        shown += [f"TP {human(parts['tp_seconds'], 'second')}"] if tensor else []
        shown += [f"PP p2p {human(parts['pp_seconds'], 'second')}", f"bubble {human(parts['bubble_seconds'], 'second')}"] if piped else []
        shown += [f"DP/ZeRO exposed {human(parts['dp_exposed_seconds'], 'second')}"] if data else []
        return step + "   ".join(shown + [f"optimizer {human(parts['optimizer_seconds'], 'second')}"])
    bubble = f"bubble {_percent(time['bubble'])} ({human(time['bubble_seconds'], 'second')})   " if piped else ""
    return step + (f"compute {human(time['compute_seconds'], 'second')}   {bubble}"
                   f"exposed comms {human(time['exposed_comm_seconds'], 'second')}")


def _whole(count: float) -> str:
    """A count as its digits with thousands separators (``32,902,420``); from 10¹⁵ on, in exponent notation."""
    from llm_formulas.render.printers.human import significant

    return f"{count:,.0f}" if abs(count) < 1e15 else significant(count)


def _share(fraction: float) -> str:
    """A utilization as a percentage, one decimal (``50.0%``); one far below 1 in exponent notation."""
    from llm_formulas.render.printers.human import significant

    return f"{fraction:.1%}" if fraction == 0 or abs(fraction) >= 1e-3 else f"{significant(100 * fraction)}%"


def _mode_line(doc: dict) -> str:
    time, assumptions = doc["time"], doc["assumptions"]
    if time["mode"] == "given":
        given = assumptions["U_given_as"]
        option = "--mfu" if given.startswith("--mfu") else f"{given} TFLOP/s of the GPU's peak"
        return (f"MFU given: U = {_share(time['mfu'])} ({option}); HFU {_share(time['hfu'])} (recompute counted); "
                f"achieved over the whole step: MFU {_share(time['step_mfu'])}")
    return (f"MFU predicted: {_share(time['mfu'])} (HFU {_share(time['hfu'])}, recompute counted); performance constants "
            f"{assumptions['constants']['provenance']}")


def register(add_command) -> None:
    command = add_command("estimate", "the training and inference report for a model, a GPU and a parallel layout", run)
    add_arguments(command)
