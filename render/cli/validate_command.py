"""``llm-formulas validate``: the published figures of ``formulas/published/`` against the catalogue.

Prints, per row, the paper's value, ours, the difference and the verdict
(reproduced, or explained by the named derivation with its cause); ``--json``
gives the same rows. Exit code 1 when any row differs unexplained.
"""

from __future__ import annotations


def _shown(value, digits: int) -> str:
    number = float(value)
    return f"{number:.{digits}g}"


def _digits(printed: str) -> int:
    """Significant digits to show ours with: two more than the paper printed."""
    mantissa = printed.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return max(len(mantissa), 1) + 2


def validate(paper_filter: str | None):
    from derivations.published import validate as judge_all
    from render.cli.numbers import InputError
    from render.cli.result import Result, number_json

    verdicts = judge_all()
    if paper_filter:
        verdicts = [v for v in verdicts if paper_filter.lower() in (v.row.id + " " + v.row.paper).lower()]
        if not verdicts:
            raise InputError(f"no published row matches {paper_filter!r}")
    rows, lines = [], []
    for v in verdicts:
        row = v.row
        entry = {
            "id": row.id,
            "paper": row.paper,
            "url": row.url,
            "where": row.where,
            "configuration": row.configuration,
            "formula": row.formula,
            "printed": row.printed_text,
            "unit": row.unit,
            "rounding": row.rounding,
            "ours": number_json(v.ours_scaled),
            "ours_range": [number_json(v.ours.low / row.scale), number_json(v.ours.high / row.scale)],
            "difference": number_json(v.difference),
            "relative_difference": number_json(v.difference / row.printed),
            "verdict": v.verdict,
        }
        if row.explanation is not None and v.paper is not None:
            entry.update(
                {
                    "paper_formula": row.explanation.formula,
                    "paper_convention_value": number_json(v.paper.value / row.scale),
                    "derivation": row.explanation.derivation,
                    "cause": row.explanation.cause,
                }
            )
        if row.note:
            entry["note"] = row.note
        rows.append(entry)
        digits = _digits(row.printed_text)
        verdict = v.verdict
        if v.verdict == "explained":
            verdict += (f" by {row.explanation.derivation} (the paper's {row.explanation.formula} gives "
                        f"{_shown(v.paper.value / row.scale, digits)}): {row.explanation.cause}")
        lines.append(
            f"{row.id}  paper {row.printed_text} {row.unit}  ours {_shown(v.ours_scaled, digits)}"
            f"  diff {_shown(v.difference, 3)} ({float(v.difference / row.printed):+.1%})  {verdict}"
        )
    counts = {name: sum(1 for v in verdicts if v.verdict == name) for name in ("reproduced", "explained", "differs")}
    papers = len({v.row.paper for v in verdicts})
    summary = (
        f"validate: {len(verdicts)} published figures from {papers} papers: "
        f"{counts['reproduced']} reproduced, {counts['explained']} explained, {counts['differs']} differ"
    )
    doc = {"rows": rows, "summary": {"rows": len(verdicts), "papers": papers, **counts}}
    return Result(doc, "\n".join(lines + [summary]), 1 if counts["differs"] else 0)


def register(add_command) -> None:
    command = add_command(
        "validate",
        "reproduce the published figures (Megatron-LM, Korthikanti, ZeRO, Kaplan, GPT-3, Chinchilla, PaLM, LLaMA, Llama 2/3, BLOOM, DeepSeek-V3); exit 1 on an unexplained difference",
        lambda args: validate(args.paper),
    )
    command.add_argument("--paper", metavar="TEXT", help="only the rows whose id or paper contains TEXT (e.g. zero2020, Chinchilla)")
