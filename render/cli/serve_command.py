"""``serve``: serving a model on a GPU layout, or the fewest GPUs that meet an SLO (DESIGN.md command table).

    llm-formulas serve --model llama2-70b --gpu h100-sxm --tp 8 --batch 64 --input 3968 --output 128
    llm-formulas serve --model llama2-70b --gpu h100-sxm --slo ttft=2s,tpot=50ms --rate 4 --input 1024 --output 256

The first prints memory per GPU and whether it fits, the largest batch that fits (the KV wall), TTFT, TPOT, the
end-to-end latency, output tokens per second (the deployment, per GPU, per user), what bounds each phase, and $ per
million output tokens and energy per token at the GPU preset's rental price and board power
(formulas/reports/serving_report.py). ``--json`` → {"ttft_seconds", "tpot_seconds", "e2e_seconds", "output_tokens_per_second",
"decode_bytes_per_step", "memory": {"per_gpu_bytes", "fits", "max_batch", "max_context", ...}, ...}; ``max_context``
is what the memory allows (−1 when every layer is windowed: no context fills it), whatever the model's window.

``--slo ttft=T,tpot=T --rate R`` searches tensor and pipeline degrees and batches (render/numeric/serving_plan.py,
vectorised) for the fewest GPUs whose replicas meet both latencies at R requests per second, and says why the winner
wins; no layout meeting them is a verdict naming the closest. A batch that does not fit is a verdict (DOES NOT FIT, with
what is missing), exit 0. Exit 2, one line: FP8 on a GPU without FP8 tensor cores, a context beyond the config's
max_position_embeddings, ``--ep`` on a dense model, a layout the model cannot split that way.
"""

from __future__ import annotations

from llm_formulas.render.cli.numbers import InputError, quote
from llm_formulas.render.cli.result import Result

WEIGHT_CHOICES = ("bf16", "fp16", "fp8", "int8", "int4")  # formulas.reports.serving_report.WEIGHT_DTYPES, here for a light --help
KV_CHOICES = ("bf16", "fp16", "fp8", "int8")
TIME_UNITS = {"s": 1, "ms": "1/1000", "us": "1/1000000", "µs": "1/1000000"}


def _load(hf_config: str | None, model: str | None):
    """The architecture, a label and the model's context window (its config's max_position_embeddings, or None)."""
    from llm_formulas.formulas.data.hf_config import ConfigError, context_window, read_config
    from llm_formulas.formulas.data.presets import preset
    from llm_formulas.render.cli.config_file import read_json_config

    try:
        if model is not None:
            chosen = preset(model)
            architecture, label, config = chosen.architecture, chosen.title, chosen.config
        else:
            config, label = read_json_config(hf_config)
            architecture = read_config(config)
        return architecture, label, context_window(config) if isinstance(config, dict) else None
    except ConfigError as error:
        raise InputError(str(error)) from None


def parse_duration(text: str, option: str):
    """``500ms``, ``2s``, ``0.05`` (seconds): an exact positive number of seconds."""
    import sympy as sp

    from llm_formulas.render.cli.inputs import parse_number

    for unit in sorted(TIME_UNITS, key=len, reverse=True):
        if text.endswith(unit):
            number, scale = text[: -len(unit)], sp.Rational(TIME_UNITS[unit])
            break
    else:
        number, scale = text, sp.Integer(1)
    value = parse_number(number.strip(), option) * scale
    if value <= 0:
        raise InputError(f"{option}: a latency must be positive, got {quote(text)}")
    return value


def parse_slo(text: str) -> dict:
    """``ttft=500ms,tpot=50ms`` → {"ttft": seconds, "tpot": seconds}; both required."""
    slo = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        name = name.strip().lower()
        if not sep or name not in ("ttft", "tpot"):
            raise InputError(f"--slo: expected ttft=T,tpot=T (e.g. ttft=500ms,tpot=50ms), got {quote(item)}")
        if name in slo:
            raise InputError(f"--slo: {name} given twice")
        slo[name] = parse_duration(value.strip(), f"--slo {name}")
    missing = [name for name in ("ttft", "tpot") if name not in slo]
    if missing:
        raise InputError(f"--slo: give both ttft and tpot (missing {', '.join(missing)})")
    return slo


def _check_layout(values: dict, label: str, t: int, p: int, e: int, s_in: int, s_out: int, window: int | None) -> None:
    """One line for a layout or a request the model cannot take (render/cli/serve_rules.py)."""
    from llm_formulas.render.cli.serve_rules import refusal

    refused = refusal(values, label, t, p, e, s_in, s_out, window)
    if refused is not None:
        raise InputError(refused)


def _inputs(args, values: dict):
    from llm_formulas.formulas.reports.serving_report import ServeInputs, unsupported
    from llm_formulas.render.cli.estimate_command import chosen_gpu
    from llm_formulas.render.cli.inputs import parse_number

    gpu = chosen_gpu(args.gpu)
    refused = unsupported(gpu, args.weights, args.kv)
    if refused:
        raise InputError(refused)
    price = None
    if args.price is not None:
        price = parse_number(args.price, "--price")
        if price <= 0:
            raise InputError(f"--price must be positive, got {quote(args.price)}")
    network = parse_number(args.network, "--network") * 10**9
    if network <= 0:
        from llm_formulas.render.cli.serve_rules import NETWORK_NOT_POSITIVE

        raise InputError(NETWORK_NOT_POSITIVE.format(text=quote(args.network)))
    from llm_formulas.formulas.data.gpus import NODE_SIZE

    return ServeInputs(values, gpu, args.weights, args.kv, NODE_SIZE.get(args.gpu, 8), network, price)


def serve(args) -> Result:
    from llm_formulas.formulas.reports.estimate import model_values
    from llm_formulas.render.cli.inputs import parse_count

    architecture, label, window = _load(args.hf_config, args.model)
    values = model_values(architecture.values)
    s_in = parse_count(args.input, "s_in", "--input")
    s_out = parse_count(args.output, "s_out", "--output")
    if s_out < 2:
        from llm_formulas.render.cli.serve_rules import OUTPUT_TOO_SHORT

        raise InputError(OUTPUT_TOO_SHORT)
    t, p, e = (parse_count(text, name, option) for text, name, option in ((args.tp, "t", "--tp"), (args.pp, "p", "--pp"), (args.ep, "e", "--ep")))
    d = parse_count(args.dp, "d", "--dp")
    if args.slo is None:
        if args.rate is not None:
            raise InputError("--rate needs --slo (the search for the fewest GPUs at that request rate)")
        if args.batch is None:
            raise InputError("give --batch B (or --slo ttft=T,tpot=T --rate R to search for it)")
        b = parse_count(args.batch, "b", "--batch")
        _check_layout(values, label, t, p, e, s_in, s_out, window)
        return _one(label, values, _inputs(args, values), t, p, e, d, b, s_in, s_out, window)
    if args.rate is None:
        raise InputError("--slo needs --rate R (requests per second)")
    if args.batch is not None:
        raise InputError("--slo searches the batch: drop --batch")
    from llm_formulas.render.cli.inputs import parse_number

    rate = parse_number(args.rate, "--rate")
    if rate <= 0:
        raise InputError(f"--rate must be positive, got {quote(args.rate)}")
    _check_layout(values, label, 1, 1, 1, s_in, s_out, window)
    if e > 1:
        raise InputError("--ep with --slo: the search spreads no experts (give a layout without --slo to price --ep)")
    return _slo(label, _inputs(args, values), parse_slo(args.slo), rate, s_in, s_out)


def _one(label: str, values: dict, inputs, t: int, p: int, e: int, d: int, b: int, s_in: int, s_out: int,
         window: int | None = None) -> Result:
    from llm_formulas.formulas.reports.serving_report import bound, report
    from llm_formulas.render.cli.result import number_json
    from llm_formulas.render.printers.human import human

    doc = report(t, p, e, d, b, s_in, s_out, inputs)
    memory = doc["memory"]
    fits = bool(memory["fits"])

    def to_json(value: object) -> object:
        if isinstance(value, dict):
            return {key: to_json(item) for key, item in value.items()}
        if value is None or isinstance(value, str):
            return value
        if getattr(value, "is_Boolean", False) or isinstance(value, bool):
            return bool(value)
        return number_json(value)

    out = to_json(doc) | {"model": label, "gpu": inputs.gpu.key, "layout": {"tp": t, "pp": p, "ep": e, "dp": d},
                          "batch": b, "input_tokens": s_in, "output_tokens": s_out, "weights": inputs.weights, "kv": inputs.kv,
                          "bounds": {"prefill": bound(doc["prefill"]), "decode": bound(doc["decode_step"])},
                          "constants": {name: number_json(v) for name, v in inputs.fitted.values().items()},
                          "constants_provenance": inputs.fitted.provenance}
    gpus = t * p * d
    layout = f"TP {t}" + (f" × PP {p}" if p > 1 else "") + (f", EP {e}" if e > 1 else "") + (f", {d} replicas" if d > 1 else "")
    lines = [f"{label} on {gpus} × {inputs.gpu.name} ({layout}), batch {b}, {s_in} prompt + {s_out} output tokens, "
             f"weights {inputs.weights}, KV {inputs.kv}"]
    verdict = "fits" if fits else f"DOES NOT FIT: {human(memory['missing_bytes'], 'byte')} missing per GPU"
    lines.append(f"memory per GPU  {human(memory['per_gpu_bytes'], 'byte')} of {human(memory['capacity_bytes'], 'byte')}: "
                 f"weights {human(memory['weights_bytes'], 'byte')}, KV cache {human(memory['kv_cache_bytes'], 'byte')} "
                 f"(blocks of 16), workspace {human(memory['workspace_bytes'], 'byte')}: {verdict}")
    if memory["weights_bytes"] + memory["workspace_bytes"] >= memory["capacity_bytes"]:
        lines.append("KV wall         the weights and workspace alone exceed the GPU's memory: more GPUs (--tp, --pp) or "
                     "smaller weights (--weights)")
    else:
        longest = int(memory["max_context"])
        beyond = f" (beyond the model's {window:,}-token window)" if window is not None and longest > window else ""
        context = "" if longest < 0 else f"; longest context at batch {b}: {longest:,} tokens{beyond}"
        lines.append(f"KV wall         at most {int(memory['max_batch']):,} sequences of {s_in + s_out:,} tokens fit{context}")
    pf, step = doc["prefill"], doc["decode_step"]
    lines.append(f"TTFT            {human(doc['ttft_seconds'], 'second')}  (the prefill of {b} × {s_in} tokens; bound by "
                 f"{bound(pf)}: compute {human(pf['compute_seconds'], 'second')}, weights {human(pf['weights_seconds'], 'second')}, "
                 f"kernels {human(pf['fixed_seconds'], 'second')}, links {human(pf['link_seconds'], 'second')})")
    lines.append(f"TPOT            {human(doc['tpot_seconds'], 'second')}  (mean of {s_out - 1} decoding steps; at the mean context "
                 f"bound by {bound(step)}: weights {human(step['weights_seconds'], 'second')}, KV {human(step['kv_seconds'], 'second')}, "
                 f"compute {human(step['compute_seconds'], 'second')}, kernels {human(step['fixed_seconds'], 'second')}, "
                 f"links {human(step['link_seconds'], 'second')})")
    lines.append(f"end to end      {human(doc['e2e_seconds'], 'second')}  for the batch's last token")
    lines.append(f"output tokens/s {human(doc['output_tokens_per_second'], '1')} in all, "
                 f"{human(doc['output_tokens_per_second_per_gpu'], '1')} per GPU, {human(doc['output_tokens_per_second_per_user'], '1')} per user")
    lines.append(f"a decoding step reads {human(doc['decode_bytes_per_step'], 'byte')} (weights {human(doc['weights_read_bytes'], 'byte')}"
                 + (f", {float(doc['experts_touched']['decode']):.3g} of {values['E']} experts per MoE layer" if values["l_moe"] else "")
                 + f"; KV cache {human(doc['kv_read_bytes'], 'byte')} at the mean context)")
    costs = []
    if "dollars_per_million_output_tokens" in doc:
        source = inputs.gpu.rent_source if inputs.price is None else None
        costs.append(f"${float(doc['dollars_per_million_output_tokens']):.3g} per million output tokens at "
                     f"${float(doc['price_per_gpu_hour']):g} per GPU-hour" + (f" ({source})" if source else ""))
    else:
        costs.append(f"no rental price for the {inputs.gpu.name}: give --price USD_PER_GPU_HOUR")
    if "joules_per_output_token" in doc:
        costs.append(f"{float(doc['joules_per_output_token']):.3g} J per output token at {int(inputs.gpu.tdp)} W per GPU")
    lines.append("cost            " + "; ".join(costs))
    lines.append(f"constants       {inputs.fitted.provenance}")
    return Result(out, "\n".join(lines))


def _slo(label: str, inputs, slo: dict, rate, s_in: int, s_out: int) -> Result:
    """The fewest GPUs meeting the SLO at ``rate``, why the winner wins, or the closest layout when none does."""
    import numpy as np

    from llm_formulas.formulas.vocabulary.bounds import MAX_GPUS
    from llm_formulas.render.numeric.serving_plan import search
    from llm_formulas.render.printers.human import human

    found = search(inputs, slo, rate, s_in, s_out)
    within = found["gpus"] <= MAX_GPUS  # a layout of more GPUs than a cluster's bound is no answer
    if found["fits"].any() and not (found["fits"] & within).any():
        raise InputError(f"--rate {float(rate):g}: every layout that fits needs more than {MAX_GPUS:,} GPUs at that rate "
                         f"(the bound on a cluster)")
    found = found | {"meets": found["meets"] & within, "fits": found["fits"] & within}
    doc = found["doc"]

    def layout(i: int) -> dict:
        return {"tp": int(found["t"][i]), "pp": int(found["p"][i]), "batch": int(found["b"][i]), "replicas": int(found["replicas"][i]),
                "gpus": int(found["gpus"][i]), "ttft_seconds": float(doc["ttft_seconds"][i]), "tpot_seconds": float(doc["tpot_seconds"][i]),
                "e2e_seconds": float(doc["e2e_seconds"][i]), "fits": bool(found["fits"][i]),
                "memory_per_gpu_bytes": float(doc["memory"]["per_gpu_bytes"][i])}

    def said(entry: dict) -> str:
        shape = f"TP {entry['tp']}" + (f" × PP {entry['pp']}" if entry["pp"] > 1 else "")
        return (f"{entry['replicas']} × ({shape}, batch {entry['batch']}) = {entry['gpus']} GPUs: TTFT {human(entry['ttft_seconds'], 'second')}, "
                f"TPOT {human(entry['tpot_seconds'], 'second')}")

    header = (f"{label} on {inputs.gpu.name}, {s_in} prompt + {s_out} output tokens at {float(rate):g} requests/s, "
              f"weights {inputs.weights}, KV {inputs.kv}; SLO TTFT ≤ {human(slo['ttft'], 'second')}, TPOT ≤ {human(slo['tpot'], 'second')}")
    ordered = [int(i) for i in found["order"] if found["meets"][i]]
    searched = len(found["t"])
    target = {"ttft_seconds": float(slo["ttft"]), "tpot_seconds": float(slo["tpot"]), "rate": float(rate)}
    if not ordered:
        fitting = np.flatnonzero(found["fits"])
        if not len(fitting):
            out = {"meets": False, "slo": target, "searched": searched, "closest": None}
            return Result(out, f"{header}\nNO LAYOUT MEETS THE SLO: none of {searched} layouts (TP × PP × batch) fits in memory")
        closest = int(fitting[np.argmin(found["miss"][fitting])])
        entry = layout(closest)
        missed = [name for name, ok in (("TTFT", found["ttft_ok"][closest]), ("TPOT", found["tpot_ok"][closest])) if not ok]
        out = {"meets": False, "slo": target, "searched": searched, "closest": entry}
        return Result(out, f"{header}\nNO LAYOUT MEETS THE SLO: of {searched} layouts the closest is {said(entry)} "
                           f"(misses {' and '.join(missed)} by {float(found['miss'][closest]) - 1:.0%})")
    best = layout(ordered[0])
    cheaper = [int(i) for i in found["order"] if found["fits"][i] and found["gpus"][i] < best["gpus"]]
    lines = [header, f"fewest GPUs: {said(best)}"]
    lines.append(f"why: {float(rate):g} requests/s × {human(best['e2e_seconds'], 'second')} each keep "
                 f"{float(rate) * best['e2e_seconds']:.3g} in flight (Little's law); a replica holds {best['pp'] * best['batch']}, so "
                 f"{best['replicas']} replica{'s' if best['replicas'] > 1 else ''} of {best['tp'] * best['pp']} GPUs")
    if cheaper:
        near = layout(min(cheaper, key=lambda i: float(found["miss"][i])))
        lines.append(f"with fewer GPUs the closest is {said(near)}: it misses the SLO")
    else:
        lines.append("no layout with fewer GPUs fits in memory")
    runners = [layout(i) for i in ordered[1:4]]
    if runners:
        lines.append("next: " + "; ".join(said(entry) for entry in runners))
    out = {"meets": True, "slo": target, "searched": searched, "best": best, "next": runners,
           "constants_provenance": inputs.fitted.provenance}
    return Result(out, "\n".join(lines))


def register(add_command) -> None:
    from llm_formulas.render.cli.model_commands import add_model_source

    command = add_command(
        "serve",
        "serving a model on a GPU layout: memory and the KV wall, TTFT, TPOT, tokens/s, cost; --slo searches the fewest GPUs",
        serve,
    )
    add_model_source(command)
    command.add_argument("--gpu", required=True, metavar="GPU", help="GPU preset, e.g. h100-sxm or a100-80gb")
    command.add_argument("--tp", default="1", metavar="T", help="tensor parallel degree of a stage (default 1)")
    command.add_argument("--pp", default="1", metavar="P", help="pipeline stages in series (default 1)")
    command.add_argument("--ep", default="1", metavar="E", help="experts spread whole over E of a stage's GPUs (MoE only; default 1)")
    command.add_argument("--dp", default="1", metavar="D", help="replicas serving in parallel (default 1)")
    command.add_argument("--batch", metavar="B", help="sequences decoded together (a static batch)")
    command.add_argument("--input", required=True, metavar="S_IN", help="prompt tokens per request")
    command.add_argument("--output", required=True, metavar="S_OUT", help="output tokens per request (at least 2)")
    command.add_argument("--weights", default="bf16", choices=WEIGHT_CHOICES, help="weight type (int4: a scale and zero point per 128)")
    command.add_argument("--kv", default="bf16", choices=KV_CHOICES, help="KV cache type (default bf16)")
    command.add_argument("--slo", metavar="ttft=T,tpot=T", help="search the fewest GPUs meeting both latencies (e.g. ttft=500ms,tpot=50ms)")
    command.add_argument("--rate", metavar="R", help="with --slo: requests per second to serve")
    command.add_argument("--price", metavar="USD", help="rental price per GPU-hour in $ (default: the GPU preset's, if it has one)")
    command.add_argument("--network", default="25", metavar="GB/s", help="one-way bandwidth per GPU across nodes (default 25: 200 Gb/s)")
