"""The workshop handout: the syllabus on two pages (``handout-a4.pdf``, ``handout-letter.pdf``), each entry a formula and
its worked example at a published configuration, priced by the code the command line runs.

The syllabus (issue 32): parameters (12lh² and the GQA/gated decoder), 6ΨD and its error, memory (the states each
framework keeps, activations, the KV cache), TP/PP/DP traffic and when each is bound, TTFT and TPOT by term, the KV
wall, MoE active against total, and $ per million tokens. Every number is ``formulas.reports.estimate.estimate`` (what
``llm-formulas estimate`` prints) or ``formulas.reports.serving_report.report`` (``llm-formulas serve``) at the named case, or
a catalogue formula evaluated exactly; every example says whether its configuration fits. The equations are the
catalogue's forms at the named model's switches, written short; ``llm-formulas show ID`` prints each in full.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache

from llm_formulas.formulas.reports import estimate
from llm_formulas.formulas.data.frameworks import framework
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.gpus import gpu
from llm_formulas.formulas.vocabulary.latex import formula_latex
from llm_formulas.formulas.data.presets import preset
from llm_formulas.render.printers.human import human

PAPERS = {"a4": "a4paper", "letter": "letterpaper"}  # handout-<key>.tex, by the geometry option it is laid out on


@dataclass(frozen=True)
class Entry:
    title: str
    formula_id: str  # what ``llm-formulas show`` prints in full
    latex: str  # the form at the example's switches, short
    example: str  # the worked example, its numbers computed


@dataclass(frozen=True)
class Section:
    title: str
    entries: tuple[Entry, ...]
    page: int = 1  # page 1 trains, page 2 serves


def _values(name: str) -> dict[str, object]:
    values = estimate.model_values(preset(name).architecture.values)
    values["P"] = int(estimate.exact("params.decoder.total", **values))
    return values


def _h(value: object, unit: str) -> str:
    return human(float(value), unit)


@cache
def gpt3_run(framework_key: str = "megatron-lm-2021", recompute: str = "full") -> dict:
    """GPT-3 175B as Narayanan et al. 2021 trained it (t = 8, p = 8, d = 16, B = 1536, s = 2048, A100 80 GB), 300B
    tokens at U = 0.45: ``estimate``'s report under ``framework_key`` and ``recompute``."""
    layout = estimate.Layout(n=1024, t=8, p=8, d=16, b=1, m=96, s=2048, recompute=recompute)
    inputs = estimate.Inputs(model=estimate.model_values(preset("gpt3-175b").architecture.values),
                             gpu=gpu("a100-80gb").inputs(), network=25 * 10**9, tokens=300 * 10**9,
                             utilization=Fraction(45, 100), overlap=Fraction(1, 2), framework=framework(framework_key))
    return estimate.estimate(layout, estimate.exact_inputs(inputs))


@cache
def llama_serving(t: int = 8, batch: int = 64, s_in: int = 2000, s_out: int = 500) -> dict:
    """Llama-2-70B served on t H100 SXM in bf16, a static batch of ``batch`` requests: ``serve``'s report."""
    from llm_formulas.formulas.reports.serving_report import ServeInputs, report

    return report(t, 1, 1, 1, batch, s_in, s_out, ServeInputs(estimate.model_values(preset("llama2-70b").architecture.values),
                                                               gpu("h100-sxm")))


def _form(formula_id: str) -> str:
    """The catalogue's own LaTeX of a short formula."""
    return formula_latex(get(formula_id))


def _fits(memory: dict, total: str, capacity: str) -> str:
    return (f"fits: {_h(memory[total], 'byte')} of {_h(memory[capacity], 'byte')}" if memory["fits"]
            else f"does not fit: {_h(memory[total], 'byte')} of {_h(memory[capacity], 'byte')}")


def parameters() -> Section:
    gpt3, llama = _values("gpt3-175b"), _values("llama2-70b")
    classic = estimate.exact("params.total", **(gpt3 | {"s": 2048}))  # 2048 learned positions
    return Section("Parameters", (
        Entry("GPT's block: 12lh²", "params.total", r"\Psi = l(12h^2 + 13h) + Vh + sh + 2h",
              f"GPT-3 175B (l = 96, h = 12288): {_h(classic, '1')}; 12lh² alone {_h(12 * 96 * 12288**2, '1')}."),
        Entry("GQA and a gated MLP", "params.decoder.total",
              r"\Psi_{layer} = h\,d_{head}(2a + 2g) + 3h\,d_{ff} + 2h,\quad \Psi = l\,\Psi_{layer} + 2Vh + h",
              f"Llama-2-70B (a = 64, g = 8 KV heads of 128, d_ff = 28672): {_h(llama['P'], '1')} "
              f"({llama['P']:,}), not 70B."),
    ))


def flops() -> Section:
    run = gpt3_run()
    six = 6 * _values("gpt3-175b")["P"] * 1536 * 2048
    exact = run["flops"]["training"]
    return Section("Training FLOPs", (
        Entry("6ΨD, and what it leaves out", "flops.training.approx", r"C \approx 6\Psi D",
              f"GPT-3 175B, one iteration of B·s = 1536 · 2048 tokens: 6ΨD = {_h(six, 'FLOP')}; the exact count "
              f"(attention scores, logits) {_h(exact, 'FLOP')}, {100 * float(exact / six - 1):.1f} % more. "
              f"On 300B tokens: {_h(six / (1536 * 2048) * 300 * 10**9, 'FLOP')}."),
    ))


def memory() -> Section:
    rows = []
    for key, recompute in (("megatron-lm-2021", "full"), ("default", "full"), ("default", "selective")):
        report = gpt3_run(key, recompute)["memory"]
        bytes_ = framework(key).holds
        name = "Megatron Core" if key == "default" else key
        rows.append(f"{name} ({bytes_.weights + bytes_.grads + bytes_.optimizer} B/param), {recompute}: "
                    + _fits(report, "total", "capacity"))
    llama = _values("llama2-70b")
    kv = estimate.exact("memory.kv_cache.per_sequence", **(llama | {"s": 4096, "q": 2}))
    return Section("Memory per GPU", (
        Entry("Model states by framework", "memory.model_states",
              r"M = (q_W + q_G + q_O)\,\Psi/(t\,p):\ 16\Psi\ \text{or}\ 18\Psi",
              "GPT-3 175B at t = 8, p = 8, d = 16 (first stage, with activations): " + "; ".join(rows) + "."),
        Entry("Activations per layer", "memory.activations.layer.selective",
              r"A^{sel} = sbh(10 + 24/t),\quad A^{full} = 2sbh",
              f"A layer's, times l on the first stage under 1F1B. GPT-3, b = 1, s = 2048, t = 8: the first stage holds {_h(gpt3_run('megatron-lm-2021', 'full')['memory']['activations'], 'byte')} "
              f"with full recompute, {_h(gpt3_run('default', 'selective')['memory']['activations'], 'byte')} with selective."),
        Entry("KV cache", "memory.kv_cache.per_sequence", r"M_{KV} = 2\,l\,g\,d_{head}\,q\,s\ \ \text{per sequence}",
              f"Llama-2-70B (GQA, g = 8), 4096 tokens in bf16: {_h(kv, 'byte')} per sequence; with a = 64 heads it "
              f"would be 8× that."),
        zero_entry(),
    ))


def zero_entry() -> Entry:
    llama = _values("llama2-70b") | {"t": 1, "p": 1, "d": 64}
    one, three = estimate.exact("memory.zero.stage1", **llama), estimate.exact("memory.zero.stage3", **llama)
    return Entry("ZeRO over d replicas", "memory.zero.stage3", _form("memory.zero.stage1") + r",\quad " + _form("memory.zero.stage3"),
                 f"Llama-2-70B on d = 64 GPUs, no TP or PP: ZeRO-1 {_h(one, 'byte')}, ZeRO-3 {_h(three, 'byte')} of "
                 f"states per GPU; the activations are then those of whole layers.")


def communication() -> Section:
    comms = gpt3_run()["comms"]
    words = {"tp": "TP (NVLink)", "pp": "PP", "dp": "DP"}
    shown = "; ".join(f"{words[dim]} {_h(comms['bytes'][dim], 'byte')}, needs {_h(comms['required_bandwidth'][dim], 'byte/second')} "
                      f"of {_h(comms['link_bandwidth'][dim], 'byte/second')}" for dim in ("tp", "pp", "dp"))
    return Section("Traffic per GPU and iteration", (
        Entry("TP, PP, DP volumes", "comms.tp.sent_per_microbatch",
              r"V_{TP} = \frac{8bshlq(t-1)}{t\,p}\,m,\ \ V_{PP} = 2bshq\,m,\ \ V_{DP} = \frac{2(d-1)}{d}\frac{q\Psi}{t\,p}",
              f"GPT-3 at t = 8, p = 8, d = 16: {shown}. A dimension is bound when it needs more than its link."),
    ))


def time() -> Section:
    run = gpt3_run()
    llama = _values("llama2-70b")
    hours = 1_720_320  # Touvron et al. 2023, Table 2: Llama-2-70B's A100 GPU-hours on 2T tokens
    mfu = estimate.exact("cluster.mfu", **(llama | {"D": 2 * 10**12, "n": 1, "tau": hours * 3600}
                                          | {"X": gpu("a100-80gb").inputs()["X"]}))
    return Section("Time", (
        Entry("The pipeline bubble", "cluster.bubble", _form("cluster.bubble"),
              f"GPT-3, p = 8, m = 96: {100 * float(run['time']['bubble']):.2f} % of the compute. At m < p it exceeds the "
              f"compute itself (estimate says so)."),
        Entry("MFU from published GPU-hours", "cluster.mfu", _form("cluster.mfu"),
              f"Llama-2-70B: {hours:,} A100-hours for 2T tokens (Touvron et al. 2023) is MFU {100 * float(mfu):.1f} %."),
    ))


def serving() -> Section:
    r = llama_serving()
    pre, dec = r["prefill"], r["decode_step"]
    terms = {"compute_seconds": "compute", "weights_seconds": "weights", "kv_seconds": "KV", "fixed_seconds": "kernels",
             "link_seconds": "links"}

    def split(phase: dict) -> str:
        return ", ".join(f"{word} {_h(phase[key], 'second')}" for key, word in terms.items() if key in phase)

    mem = r["memory"]
    one = llama_serving(t=1, batch=1)["memory"]
    h100 = gpu("h100-sxm").inputs() | {"q_w": 2}
    balance = estimate.exact("inference.balance_batch", **h100)
    return Section("Serving (Llama-2-70B, 8 H100 SXM, bf16, 64 requests of 2000 + 500 tokens)", (
        Entry("Decoding: the balance batch", "inference.balance_batch", _form("inference.balance_batch"),
              f"H100 SXM in bf16: {float(balance):.0f} sequences; below it a decoding step is bound by reading the "
              f"weights, above it by compute."),
        Entry("TTFT and TPOT by term", "serving.decode.weights_read",
              r"T = \frac{F}{X} + \frac{\text{bytes}}{W_{mem}} + n_k\tau_k + T_{link}",
              f"TTFT {_h(r['ttft_seconds'], 'second')} ({split(pre)}); TPOT {_h(r['tpot_seconds'], 'second')} "
              f"({split(dec)}). {_fits(mem, 'per_gpu_bytes', 'capacity_bytes')} per GPU."),
        Entry("The KV wall", "serving.memory.max_batch", r"b_{max} = \frac{M_{GPU} - M_w - M_{ws}}{M_{KV}^{seq}/t}",
              f"At most {int(mem['max_batch']):,} sequences of 2500 tokens fit. On one H100 the 138 GB of weights "
              f"alone do not: {_fits(one, 'per_gpu_bytes', 'capacity_bytes')}."),
        Entry("$ per million output tokens", "serving.cost.per_token", r"c = \frac{n\,c_{GPU\cdot h}}{3600\,R_{out}} \cdot 10^6",
              f"{_h(r['output_tokens_per_second'], '1')} tokens/s on 8 GPUs at ${float(gpu('h100-sxm').rent):.2f} an hour: "
              f"${float(r['dollars_per_million_output_tokens']):.2f} per million output tokens."),
    ), page=2)


def moe_and_cost() -> Section:
    mixtral = _values("mixtral-8x7b")
    active = estimate.exact("params.decoder.active", **mixtral)
    run = gpt3_run()
    hours = run["time"]["gpu_hours"]
    rent = gpu("a100-80gb").rent
    return Section("MoE and training cost", (
        Entry("MoE: active against total", "params.decoder.active", r"\Psi_{active} = \Psi - l\,(E - k)\,\Psi_{expert}",
              f"Mixtral 8x7B (E = 8, k = 2): {_h(mixtral['P'], '1')} held, {_h(active, '1')} per token; memory "
              f"follows the total, FLOPs the active."),
        Entry("Training cost", "cost.training", r"\$ = H_{GPU}\,c_{GPU\cdot h},\quad H_{GPU} = \frac{6\Psi D}{3600\,X U}",
              f"GPT-3 175B on 300B tokens at U = 0.45, 1024 A100s: {_h(hours, '1')} GPU-hours, "
              f"{_h(run['time']['training_days'] * 86400, 'second')}; at ${float(rent):.2f} an hour {_h(hours * rent, 'dollar')}."),
    ), page=2)


def handout() -> tuple[Section, ...]:
    """The two pages' sections, in the syllabus's order."""
    return (parameters(), flops(), memory(), communication(), time(), serving(), moe_and_cost())
