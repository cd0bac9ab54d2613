"""Schematic pictures drawn from the formulas: what runs where, and when.

- ``pipeline_schedule``: 1F1B above the interleaved schedule, GPU by GPU, from the event replay of
  ``render.documents.schedules``, titled with the catalogue's bubbles (``cluster.bubble``,
  ``cluster.bubble.interleaved``) beside the idle share the replay measures;
- ``ring_allreduce``: a ring all-reduce's 2(n − 1) steps (``comms.collective.allreduce.ring_steps``),
  each GPU's copy of each of the n chunks, shaded by how many GPUs' contributions it holds;
- ``tp_sharding``: Megatron's tensor-parallel split of attention (heads, column then row
  parallel) and of the MLP, with each GPU's shapes at a real model's sizes;
- ``zero_partitioning``: what each data-parallel rank keeps at ZeRO stages 0–3, in GB at a real
  model's Ψ (``memory.zero``, ``memory.zero.stage1/2/3``).

Each is a function of one matplotlib axes, as ``render.documents.lesson_plots`` draws them.
"""

from __future__ import annotations

from fractions import Fraction

from matplotlib.patches import FancyArrowPatch, Rectangle

from llm_formulas.formulas.reports import estimate
from llm_formulas.formulas.data.presets import preset
from llm_formulas.render.documents.exercise_kit import model as _model
from llm_formulas.render.documents.schedules import idle_share, interleaved, makespan, one_f_one_b, uneven

FORWARD, BACKWARD = "#9ecae1", "#fdae6b"
SECOND_CHUNK = {"F": "#3182bd", "B": "#e6550d"}
GB = 1e9


def _gantt(ax, events, top: float, label: str, p: int) -> None:
    span = float(makespan(events))
    for event in events:
        y = top - event.gpu
        colour = (FORWARD if event.kind == "F" else BACKWARD) if event.chunk == 0 else SECOND_CHUNK[event.kind]
        width = float(event.end - event.start)
        ax.add_patch(Rectangle((float(event.start), y - 0.4), width, 0.8, facecolor=colour, edgecolor="white", linewidth=0.6))
        if width >= span / 45:  # numbers only where they can be read
            ax.text(float(event.start) + width / 2, y, str(event.micro_batch + 1), ha="center", va="center", fontsize=6,
                    color="black" if event.chunk == 0 else "white")
    for gpu in range(p):
        ax.text(-0.3, top - gpu, f"GPU {gpu + 1}", ha="right", va="center", fontsize=7)
    ax.text(0, top + 0.75, label, fontsize=8, va="bottom")


def pipeline_schedule(ax, p: int = 4, m: int = 8, v: int = 2) -> None:
    """1F1B and the interleaved schedule of m micro-batches over p GPUs (a forward 1 unit, a backward 2)."""
    plain, chunked = one_f_one_b(p, m), interleaved(p, v, m)
    bubble = estimate.exact("cluster.bubble", p=p, m=m)
    bubble_v = estimate.exact("cluster.bubble.interleaved", p=p, m=m, v=v)
    _gantt(ax, plain, 2 * p + 1.5, f"1F1B, p = {p} GPUs, m = {m} micro-batches: idle {idle_share(plain)} of the compute "
           f"(the bubble (p − 1)/m = {bubble})", p)
    _gantt(ax, chunked, p - 1, f"interleaved, v = {v} chunks per GPU (dark: the second chunk): idle {idle_share(chunked)} "
           f"(the bubble (p − 1)/(v·m) = {bubble_v})", p)
    end = float(max(makespan(plain), makespan(chunked)))
    ax.add_patch(Rectangle((0, -5), 0.01, 0.01, facecolor=FORWARD, label="forward of a micro-batch (its number)"))
    ax.add_patch(Rectangle((0, -5), 0.01, 0.01, facecolor=BACKWARD, label="backward (twice a forward)"))
    ax.set(xlim=(-2.2, end + 0.5), ylim=(-0.8, 2 * p + 3), xlabel="time (one forward of one stage = 1)", yticks=[])
    ax.set_title("Pipeline schedules replayed: what each GPU runs, and when", fontsize=9)
    ax.grid(False)
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False)


def uneven_schedule(ax, model: str = "bloom-176b", stages: tuple[int, ...] = (5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5),
                    s: int = 2048, m: int = 24) -> None:
    """1F1B over uneven stages: each stage's forward its blocks (the last also the output head, ``pipeline.logits_layers``
    layer-forwards of work), its backward twice that; the slowest stage paces every slot."""
    values = _model(model)
    head = estimate.exact("pipeline.logits_layers", V=values["V"], h=values["h"], s=s)
    work = [Fraction(count) for count in stages]
    work[-1] += Fraction(int(head.p), int(head.q))
    events = uneven(work, m)
    p = len(stages)
    _gantt(ax, events, p - 1, f"blocks per stage {', '.join(map(str, stages))}, the last stage also runs the head "
           f"(+{float(head):.2f}); m = {m}", p)
    w_max, w_tot = max(work), sum(work)
    factor = float(estimate.exact("pipeline.step_factor", p=p, w_max=str(w_max), w_tot=str(w_tot)))
    balanced = (m + p - 1) * 3 * w_tot / p
    ax.axvline(float(balanced), color="black", linestyle=":", linewidth=1, label="where balanced stages of the same work would end")
    ax.set(xlim=(-12, float(makespan(events)) * 1.01), ylim=(-0.8, p + 0.9), xlabel="time (one block's forward = 1)", yticks=[])
    ax.set_title(f"{preset(model).title}'s uneven stages under 1F1B, replayed: the slowest stage paces every slot "
                 f"(p·w_max/w_tot = {factor:.3f})", fontsize=8)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    ax.grid(False)
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)


def _ring_states(n: int) -> list[list[list[frozenset[int]]]]:
    """After each step of a ring all-reduce: for each GPU, for each chunk, whose contributions its copy holds."""
    state = [[frozenset({gpu}) for _ in range(n)] for gpu in range(n)]
    states = []
    for step in range(2 * (n - 1)):
        new = [list(row) for row in state]
        for gpu in range(n):
            target = (gpu + 1) % n
            if step < n - 1:  # reduce-scatter: send chunk (gpu − step), the receiver adds it to its own
                chunk = (gpu - step) % n
                new[target][chunk] = state[target][chunk] | state[gpu][chunk]
            else:  # all-gather: send the finished chunk (gpu + 1 − k), the receiver keeps it
                chunk = (gpu + 1 - (step - n + 1)) % n
                new[target][chunk] = state[gpu][chunk]
        state = new
        states.append(state)
    return states


def ring_allreduce(ax, n: int = 4) -> None:
    """Each GPU's n chunks after every step of the ring: darker holds more GPUs' contributions."""
    steps = int(estimate.exact("comms.collective.allreduce.ring_steps", n=n))
    sent = estimate.exact("comms.redundancy.allreduce", n=n)
    states = _ring_states(n)
    assert len(states) == steps
    shades = matplotlib_blues(n)
    for step, state in enumerate(states):
        x0 = step * (n + 1.5)
        for gpu in range(n):
            for chunk in range(n):
                held = len(state[gpu][chunk])
                ax.add_patch(Rectangle((x0 + chunk, n - gpu - 1), 0.92, 0.85, facecolor=shades[held - 1], edgecolor="none"))
                if held == n:
                    ax.text(x0 + chunk + 0.46, n - gpu - 0.58, "Σ", ha="center", va="center", fontsize=6, color="white")
        phase = "reduce-scatter" if step < n - 1 else "all-gather"
        ax.text(x0 + n / 2, n + 0.25, f"step {step + 1}\n{phase}", ha="center", va="bottom", fontsize=6)
    for gpu in range(n):
        ax.text(-0.4, n - gpu - 0.58, f"GPU {gpu + 1}", ha="right", va="center", fontsize=7)
    ax.set(xlim=(-2.5, steps * (n + 1.5)), ylim=(-1.3, n + 1.4), xticks=[], yticks=[])
    ax.set_title(f"Ring all-reduce on n = {n} GPUs: {steps} steps, each sends 1/{n} of the buffer; "
                 f"each GPU sends {sent} × the buffer in all", fontsize=8)
    ax.text(0, -0.9, "Each square is one of the n chunks of the buffer on that GPU; darker: the sum of more GPUs' chunks; "
            "Σ: the whole sum.", fontsize=6)
    ax.grid(False)
    for side in ax.spines.values():
        side.set_visible(False)


def matplotlib_blues(n: int) -> list:
    import matplotlib

    return [matplotlib.colormaps["Blues"](0.25 + 0.7 * k / max(n - 1, 1)) for k in range(n)]


def _box(ax, x: float, y: float, w: float, h: float, text: str, colour: str) -> None:
    ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, edgecolor="black", linewidth=0.6))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=6)


def _arrow(ax, start: tuple[float, float], end: tuple[float, float]) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=7, linewidth=0.7, color="black"))


def tp_sharding(ax, model: str = "llama2-70b", t: int = 8) -> None:
    """Megatron's split of one layer over t GPUs: attention by heads, the MLP by its inner width (two GPUs drawn)."""
    values = _model(model)
    h, a, g, d_head, d_ff = (int(values[name]) for name in ("h", "a", "g", "d_head", "d_ff"))
    gated = int(values.get("gated", 0))
    rows = {"GPU 1": 1.6, f"GPU {t}": 0.0}
    for name, y in rows.items():
        ax.text(-0.2, y + 0.35, name, ha="right", va="center", fontsize=7)
        _box(ax, 0.0, y, 1.3, 0.7, f"X\n[b·s, {h}]\nwhole", "#eeeeee")
        _box(ax, 1.7, y, 1.9, 0.7, f"Q K V: {a // t} + {g // t} + {g // t} heads\n[{h}, {(a + 2 * g) // t * d_head}]", FORWARD)
        _box(ax, 4.0, y, 1.5, 0.7, f"attention of\nits {a // t} heads", FORWARD)
        _box(ax, 5.9, y, 1.6, 0.7, f"output proj.\n[{a // t * d_head}, {h}]", FORWARD)
        _box(ax, 8.7, y, 1.9, 0.7, f"MLP in ({'gate + up' if gated else 'up'})\n[{h}, {(1 + gated) * d_ff // t}]", BACKWARD)
        _box(ax, 11.0, y, 1.6, 0.7, f"MLP out\n[{d_ff // t}, {h}]", BACKWARD)
        for x0, x1 in ((1.3, 1.7), (3.6, 4.0), (5.5, 5.9), (10.6, 11.0)):
            _arrow(ax, (x0, y + 0.35), (x1, y + 0.35))
    for x, label in ((7.6, "all-reduce\n(sum of the t\npartial outputs)"), (12.7, "all-reduce")):
        ax.add_patch(Rectangle((x, -0.05), 0.9, 2.4, facecolor="#c7e9c0", edgecolor="black", linewidth=0.6))
        ax.text(x + 0.45, 1.15, label, ha="center", va="center", fontsize=6, rotation=90)
    ax.text(6.3, 1.05, "⋮", ha="center", va="center", fontsize=10)
    ax.text(0.0, 2.55, f"{preset(model).title}, one layer split over t = {t} GPUs: attention by heads (column then row "
            f"parallel), the MLP by its width d_ff = {d_ff}", fontsize=7)
    ax.set(xlim=(-1.2, 13.8), ylim=(-0.4, 2.9), xticks=[], yticks=[])
    ax.set_title("Tensor parallelism: each GPU holds 1/t of every weight matrix; two all-reduces per layer forward", fontsize=8)
    ax.grid(False)
    for side in ax.spines.values():
        side.set_visible(False)


ZERO_PARTS = (("16-bit weights", 2, "#6baed6"), ("16-bit gradients", 2, "#fd8d3c"), ("Adam fp32 states", 12, "#74c476"))
ZERO_STAGES = {0: "memory.zero", 1: "memory.zero.stage1", 2: "memory.zero.stage2", 3: "memory.zero.stage3"}


def zero_partitioning(ax, model: str = "llama2-70b", d: int = 64, ranks: int = 4) -> None:
    """What each data-parallel rank keeps at ZeRO stages 0–3 (t = p = 1): a part is kept whole (solid) or as a 1/d share
    (solid at the bottom of its dashed outline); the labels are ``memory.zero.stage*`` in GB."""
    values = _model(model) | {"t": 1, "p": 1, "d": d}
    psi = values["P"]
    for stage, formula_id in ZERO_STAGES.items():
        kept = 0.0
        for rank in range(ranks):
            x = stage * (ranks + 1.5) + rank
            bottom = 0.0
            for index, (label, bytes_per, colour) in enumerate(ZERO_PARTS):
                whole = bytes_per * psi / GB
                partitioned = len(ZERO_PARTS) - index <= stage  # stage 1: the Adam states, 2: and gradients, 3: all
                share = whole / d if partitioned else whole
                if partitioned:
                    ax.add_patch(Rectangle((x - 0.4, bottom), 0.8, whole, facecolor="white", edgecolor=colour,
                                           linestyle="--", linewidth=0.8))
                ax.add_patch(Rectangle((x - 0.4, bottom), 0.8, max(share, whole * 0.012), facecolor=colour,
                                       edgecolor="none", label=label if stage == 0 and rank == 0 else None))
                bottom += whole
                kept += share if rank == 0 else 0
        total = float(estimate.exact(formula_id, **values)) / GB
        assert abs(total - kept) < 1e-6 * total  # the picture is the formula
        ax.text(stage * (ranks + 1.5) + (ranks - 1) / 2, 16 * psi / GB * 1.03, f"stage {stage}\n{total:,.0f} GB kept",
                ha="center", va="bottom", fontsize=7)
    ax.add_patch(Rectangle((0, 0), 0, 0, facecolor="white", edgecolor="grey", linestyle="--",
                           label=f"partitioned: each rank keeps 1/{d} (the solid foot)"))
    ticks = [stage * (ranks + 1.5) + rank for stage in ZERO_STAGES for rank in range(ranks)]
    ax.set_xticks(ticks, [f"rank {rank + 1}" if rank in (0, ranks - 1) else "" for _ in ZERO_STAGES for rank in range(ranks)],
                  fontsize=6)
    ax.set(ylabel="GB per rank", xlim=(-1, ticks[-1] + 1), ylim=(0, 16 * psi / GB * 1.25))
    ax.set_title(f"ZeRO stages over {d} data-parallel ranks, {preset(model).title}: what each rank keeps", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, frameon=False)
