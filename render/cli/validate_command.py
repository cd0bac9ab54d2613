"""``llm-formulas validate``: the published figures of ``formulas/data/published/`` against the catalogue.

Prints, per paper, the sources that confirmed its rows against the paper's
text; per row, the paper's value, ours, the difference and the verdict
(reproduced, or explained by the named derivation with its cause), and for a
row no source confirmed, why; ``--json`` gives the same rows. Exit code 1 when
any row differs unexplained.
"""

from __future__ import annotations

from statistics import median


def _shown(value, digits: int) -> str:
    number = float(value)
    return f"{number:.{digits}g}"


def _digits(printed: str) -> int:
    """Significant digits to show ours with: two more than the paper printed."""
    mantissa = printed.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return max(len(mantissa), 1) + 2


def _at(inputs) -> str:
    """The inputs a paper's convention changes, as a reader reads them: `` at P = 5.296e+11``."""
    return "".join(f"{' at' if i == 0 else ','} {name} = {float(value):.6g}" for i, (name, value) in enumerate(inputs))


def validate(paper_filter: str | None):
    from llm_formulas.derivations.reports.published import validate as judge_all
    from llm_formulas.render.cli.numbers import InputError, quote
    from llm_formulas.render.cli.result import Result, number_json

    verdicts = judge_all()
    if paper_filter:
        verdicts = [v for v in verdicts if paper_filter.lower() in (v.row.id + " " + v.row.paper).lower()]
    predicted, predicted_lines = _predictions(paper_filter)
    serving, serving_lines = _serving(paper_filter)
    predicted_lines = predicted_lines + serving_lines
    if not verdicts and not any(predicted.values()) and not any(serving.values()):
        raise InputError(f"no published row matches {quote(paper_filter)}")
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
            "confirmed_by": list(row.confirmed_by),
        }
        if row.unverified:
            entry["unverified"] = row.unverified
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
        if row.paper != (verdicts[len(rows) - 2].row.paper if len(rows) > 1 else None):
            sources = list(dict.fromkeys(source for w in verdicts if w.row.paper == row.paper for source in w.row.confirmed_by))
            lines.append(f"{row.paper}: confirmed by {'; '.join(sources) if sources else 'no source'}")
        digits = _digits(row.printed_text)
        verdict = v.verdict + {"round": "", "truncate": " (the paper truncates)", "ceiling": " (printed rounded up)"}[row.rounding]
        if v.verdict == "explained":
            verdict += (f" by {row.explanation.derivation} (the paper's {row.explanation.formula}{_at(row.explanation.inputs)} gives "
                        f"{_shown(v.paper.value / row.scale, digits)}): {row.explanation.cause}")
        lines.append(
            f"{row.id}  paper {row.printed_text} {row.unit}  ours {_shown(v.ours_scaled, digits)}"
            f"  diff {_shown(v.difference, 3)} ({float(v.difference / row.printed):+.1%})  {verdict}"
            + (f"  [unverified: {row.unverified}]" if row.unverified else "")
        )
    counts = {name: sum(1 for v in verdicts if v.verdict == name) for name in ("reproduced", "explained", "differs")}
    papers = len({v.row.paper for v in verdicts})
    unverified = [v.row.id for v in verdicts if v.row.unverified]
    if verdicts:
        lines.append(
            f"sources: {len(verdicts) - len(unverified)} of {len(verdicts)} rows confirmed against the papers' text or repositories"
            + (f"; not confirmed: {', '.join(unverified)}" if unverified else "")
        )
    summary = (
        f"validate: {len(verdicts)} published figures from {papers} paper{'s' if papers != 1 else ''}: "
        f"{counts['reproduced']} reproduced, {counts['explained']} explained, {counts['differs']} differ"
        if verdicts else
        f"validate: no published figure matches {quote(paper_filter)}, "
        f"{sum(map(len, predicted.values())) + sum(map(len, serving.values()))} predicted runs do (above)"
    )
    doc = {"rows": rows, "summary": {"rows": len(verdicts), "papers": papers, **counts,
                                     "confirmed": len(verdicts) - len(unverified), "unverified": unverified},
           "predictions": predicted, "serving": serving}
    return Result(doc, "\n".join(lines + predicted_lines + [summary]), 1 if counts["differs"] else 0)


PREDICTION_GROUPS = {
    "calibration": "fitted: the A100's performance constants come from these ten rows",
    "validation": "not fitted: measured runs of other publications, each in its framework",
    "layers": "not fitted: one 22B layer, forward + backward",
}


def _predictions(paper_filter: str | None) -> tuple[dict, list[str]]:
    """The performance model's step-time predictions beside the published throughputs (render.numeric.calibrate):
    reported with their errors, not judged, since a model of time is no identity; a run the model misses by more
    than 10 % carries the data file's note on why."""
    from llm_formulas.render.numeric.calibrate import predictions

    groups = predictions()
    if paper_filter:
        groups = {name: [row for row in rows if paper_filter.lower() in (row["run"] + " " + row["source"]).lower()]
                  for name, rows in groups.items()}
    lines = []
    for name, rows in groups.items():
        if not rows:
            continue
        misses = [abs(row["error"]) for row in rows]
        lines.append(f"predicted step times, {name} ({PREDICTION_GROUPS[name]}): median error {median(misses):.1%}, "
                     f"largest {max(misses):.1%}")
        for row in rows:
            shown = FIGURE_UNITS[row["figure"]]
            lines.append(f"  {row['run']}  published {shown(row['published'])}  predicted {shown(row['predicted'])}  error {row['error']:+.1%}"
                         + (f"  ({row['note']})" if "note" in row and abs(row["error"]) > 0.1 else ""))
    return groups, lines


SERVING_ROLES = {"calibration": "fitted: the serving constants come from these rows",
                 "validation": "not fitted: predicted with the calibration source's constants",
                 "consistency": "not fitted: an older release of the calibration source's own tables"}


def _serving(paper_filter: str | None) -> tuple[dict, list[str]]:
    """The serving model against published serving measurements (render.numeric.serving_calibrate): every used row with
    its error, by source and metric, and the excluded rows counted by reason; reported, not judged."""
    from llm_formulas.render.numeric.serving_calibrate import excluded, predictions, summary

    groups = predictions()
    if paper_filter:
        groups = {source: [e for e in entries if paper_filter.lower() in (e["id"] + " " + e["source"] + " " + e["setup"]).lower()]
                  for source, entries in groups.items()}
        groups = {source: entries for source, entries in groups.items() if entries}
    lines = []
    for source, figures in summary(groups).items():
        lines.append(f"serving, {source} ({SERVING_ROLES[figures['role']]}): {figures['rows']} rows, median error "
                     f"{figures['median_error']:.1%}, largest {figures['max_error']:.1%}")
        for metric, by_metric in figures["metrics"].items():
            lines.append(f"  {metric}: {by_metric['rows']} rows, median {by_metric['median_error']:.1%}, largest {by_metric['max_error']:.1%}")
        for entry in groups[source]:
            shown = f"  {entry['id']}  {entry['setup']}  {entry['metric']}  published {entry['published']:g} {entry['unit']}  " \
                    f"predicted {entry['predicted']:.4g}  error {entry['error']:+.1%}"
            lines.append(shown + (f"  [excluded: {entry['excluded']}]" if "excluded" in entry else ""))
    if not paper_filter:
        for reason, count in excluded().items():
            lines.append(f"serving rows excluded ({count}): {reason}")
    return groups, lines


FIGURE_UNITS = {  # each figure as its publication prints it
    "mfu": lambda x: f"{100 * x:.3g} % MFU",
    "megatron_tflops": lambda x: f"{x:.4g} TFLOP/s",
    "step_seconds": lambda x: f"{x:.4g} s",
    "layer_ms": lambda x: f"{x:.3g} ms",
}


def register(add_command) -> None:
    command = add_command(
        "validate",
        "reproduce the published figures (Megatron-LM, Korthikanti, ZeRO, Kaplan, GPT-3, Chinchilla, PaLM, LLaMA, Llama 2/3, BLOOM, DeepSeek-V3); exit 1 on an unexplained difference",
        lambda args: validate(args.paper),
    )
    command.add_argument("--paper", metavar="TEXT", help="only the rows whose id or paper contains TEXT (e.g. zero2020, Chinchilla)")
