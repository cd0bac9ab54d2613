"""``llm-formulas build``: the manifest, determinism, speed, and what the Markdown and HTML hold."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from build_session import built, scratch
from llm_formulas.derivations.reports.catalogue import all_derivations
from llm_formulas.formulas.vocabulary.catalogue import all_formulas
from llm_formulas.formulas.vocabulary.examples import all_examples
from llm_formulas.render.cli.main import main
from llm_formulas.render.printers.escape import md_text, tex_text
from llm_formulas.formulas.vocabulary.latex import formula_latex

EXPECTED = {"reference.md", "reference.html", "reference.tex", "calculator.html", "llm_formulas_numeric.py"}


def test_manifest_lists_every_file_with_its_sha256():
    build = built()
    listed = {row["path"]: row for row in build.printed["files"]}
    on_disk = {p.relative_to(build.out).as_posix() for p in build.out.rglob("*") if p.is_file()} - {"manifest.json"}
    assert set(listed) == on_disk
    assert EXPECTED <= on_disk
    for path, row in listed.items():
        data = (build.out / path).read_bytes()
        assert row["sha256"] == hashlib.sha256(data).hexdigest() and row["bytes"] == len(data), path
    assert json.loads((build.out / "manifest.json").read_text()) == build.printed


def test_notebooks_and_plots_are_in_the_manifest():
    listed = {row["path"] for row in built().printed["files"]}
    taught_in = {"peers": "memory"}  # the other calculators' forms: the memory lesson's section 8 prices them beside ours
    topics = {taught_in.get(f.id.split(".")[0], f.id.split(".")[0]) for f in all_formulas()}
    assert {f"notebooks/{t}.ipynb" for t in topics} <= listed
    assert {f"notebooks/article_{a}.ipynb" for a in ("000", "001", "002", "004")} <= listed
    plots = {p for p in listed if p.startswith("plots/")}
    skipped_plots = [s for s in built().printed["skipped"] if s.startswith("plot ")]
    assert len(plots) == 12 and skipped_plots == []  # four plots, PNG, SVG and PDF each


CHEAP_STAGES = "plots,cheatsheet,guide,calculator,notebooks,slides"  # seconds; the reference and the numeric code take minutes


@pytest.mark.parametrize("only", [CHEAP_STAGES, pytest.param(None, marks=pytest.mark.slow)])
def test_building_twice_writes_identical_bytes(only):
    # the second build runs in a process of its own under another string-hash seed: an order taken from a set of
    # names (a sort whose key ties E and e) differs between processes, never within one (CI's xdist workers showed it).
    # Every run rebuilds the cheap stages; the whole build is rebuilt in CI's slow run (`pytest -m slow`)
    first = built()
    again = scratch(f"again-{only is None}")
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"  # not this process's seed
    part = [] if only is None else ["--only", only]
    run = subprocess.run([sys.executable, "-m", "llm_formulas.render.cli.main", "build", "--out", str(again), "--json",
                          "--no-execute", *part], capture_output=True, text=True, env=os.environ | {"PYTHONHASHSEED": seed},
                         timeout=3600)
    assert run.returncode == 0, run.stderr
    printed = json.loads(run.stdout)
    if only is None:
        assert printed == first.printed
    else:  # the session build's rows of those stages' files, and its reasons for what they skipped
        from llm_formulas.render.documents.build import planned_files

        planned = {path.relative_to(first.out).as_posix() for path in planned_files(first.out, None, tuple(only.split(",")))}
        assert printed["files"] == [row for row in first.printed["files"] if row["path"] in planned]
        assert len(printed["files"]) == len(planned) and set(printed["skipped"]) <= set(first.printed["skipped"])
    for row in printed["files"]:
        assert (again / row["path"]).read_bytes() == (first.out / row["path"]).read_bytes(), row["path"]


@pytest.mark.parametrize("option", ["--out", "--notebooks-dir"])
def test_a_file_in_place_of_a_directory_is_bad_input(option, tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("x")
    arguments = ["build", option, str(target)] + (["--out", str(tmp_path / "out")] if option != "--out" else [])
    assert main(arguments) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "where a folder must be" in err and not (tmp_path / "out").exists()


# --- Markdown ------------------------------------------------------------------------


def _without_math(markdown: str) -> str:
    text = re.sub(r"\n *\$\$\n.*?\n *\$\$\n", "\n", markdown, flags=re.S)
    return re.sub(r"\$`[^`]*`\$", "", text)


def test_markdown_prints_each_formula_as_display_math():
    markdown = (built().out / "reference.md").read_text()
    blocks = set(re.findall(r"\n\$\$\n(.*?)\n\$\$\n", markdown, flags=re.S))
    for formula in all_formulas():
        assert formula_latex(formula).replace("|", r"\vert ") in blocks, formula.id


def test_markdown_text_has_no_stray_emphasis():
    # underscores and asterisks in ids, meanings and sources must not turn into emphasis
    html = MarkdownIt("commonmark").enable("table").render(_without_math((built().out / "reference.md").read_text()))
    emphasised = set(re.findall(r"<em>(.*?)</em>", html))
    assert emphasised <= {"defines", "equals", "solves", "approximates", "bounds", "refutes", "concludes"}


def test_markdown_escape_survives_a_hostile_string():
    hostile = "a_b*c*_d_ [x](y) <b> | $5 # `z`"
    html = MarkdownIt("commonmark").render(md_text(hostile))
    assert html.strip() == "<p>a_b*c*_d_ [x](y) &lt;b&gt; | $5 # `z`</p>"


# --- HTML ----------------------------------------------------------------------------


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.external: list[str] = []
        self.articles: list[str] = []
        self.maths = 0
        self.text: list[str] = []

    def handle_data(self, data):
        self.text.append(data)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href", "").startswith("#"):
            self.links.append(attrs["href"][1:])
        for key in ("src", "href"):  # a resource the page would load; a link out (<a href>, a cited paper) loads nothing
            if re.match(r"(https?:)?//", attrs.get(key) or "") and not (tag == "a" and key == "href"):
                self.external.append(attrs[key])
        if tag == "article":
            self.articles.append(attrs["id"])
        if tag == "math":
            self.maths += 1


def test_html_is_self_contained_with_a_working_table_of_contents():
    page = _Collector()
    page.feed((built().out / "reference.html").read_text())
    assert page.external == []
    assert set(page.links) <= page.ids
    assert len(page.articles) == len(all_formulas())
    steps = sum(len(d.steps) for d in all_derivations())
    assert page.maths >= len(all_formulas()) + steps


def test_html_shows_every_slip_of_the_sources():
    page = _Collector()
    page.feed((built().out / "reference.html").read_text())
    text = " ".join("".join(page.text).split())
    slipped = [e for e in all_examples() if e.slip]
    refutations = [s for d in all_derivations() for s in d.steps if s.claim == "refutes"]
    assert refutations, "the sources have known slips (000's 6Ψ per token for inference)"
    for words in [e.slip for e in slipped] + [s.why for s in refutations]:
        assert " ".join(words.split()) in text, words


def test_reference_tex_names_every_formula():
    tex = (built().out / "reference.tex").read_text()
    assert not any(ord(c) > 127 for c in tex)
    for formula in all_formulas():
        assert r"\texttt{" + tex_text(formula.id) + "}" in tex


def test_generated_files_are_text_without_timestamps():
    for name in ("reference.md", "reference.html", "reference.tex", "calculator.html", "llm_formulas_numeric.py"):
        text = Path(built().out, name).read_text()
        assert not re.search(r"20\d\d-\d\d-\d\d[ T]\d\d:\d\d", text), name


def test_html_offers_each_formula_latex_to_copy():
    page = _Collector()
    page.feed((built().out / "reference.html").read_text())
    text = "".join(page.text)
    for formula in all_formulas():
        assert formula_latex(formula) in text, formula.id


def test_html_escapes_every_string_a_formula_carries(monkeypatch):
    # a formula whose words try to inject markup must come out as text (jinja2 autoescape)
    import dataclasses

    from llm_formulas.formulas.vocabulary.catalogue import Source, catalogue
    from llm_formulas.render.documents.reference import Reference, TopicView, formula_view, topic_title
    from llm_formulas.render.documents.templating import render

    hostile = '<script>alert("x")</script> & <b>bold</b>'
    entries = catalogue()
    original = entries["params.layer.norms"]
    monkeypatch.setitem(entries, "params.layer.norms", dataclasses.replace(
        original, meaning=hostile, notes=hostile, sources=(Source("000", hostile),)))  # a source cites a known work; its place is free text
    # the page around that one formula (the whole reference is built by the session build, above)
    view = formula_view(entries["params.layer.norms"], outcomes={})
    page = Reference(topics=(TopicView("params", topic_title("params"), (view,)),), symbols=(), errata=(),
                     derivations=1, checks=0, failed=0, presets=(), bibliography=())
    html = render("reference.html", ref=page)
    assert "<script>alert" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in html


def test_build_announces_its_stages_on_a_terminal_as_they_run():
    import io

    from llm_formulas.render.documents.build import STAGES, Stages

    terminal = io.StringIO()
    stages = Stages(terminal, live=True)
    for name in STAGES:
        with stages(name):
            assert terminal.getvalue().endswith(f"{name}…")  # announced before the stage's work, not after
    lines = terminal.getvalue().splitlines()
    assert [line.split("…")[0] for line in lines] == [f"[{i}/{len(STAGES)}] {name}" for i, name in enumerate(STAGES, 1)]
    assert all(line.endswith(" s") for line in lines)
    assert {"reference", "pdf", "notebooks", "plots", "slides"} <= set(STAGES)  # the stages issues 12 and 36 name


def _rows(out: Path) -> dict[str, dict]:
    return {row["path"]: row for row in json.loads((out / "manifest.json").read_text())["files"]}


def test_a_piped_build_prints_each_stage_with_its_files_and_seconds(tmp_path):
    # issue 36: through a pipe or into a log the build printed nothing until it ended
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "llm_formulas", "build", "--out", str(out), "--only", "guide,cheatsheet",
                          "--no-pdf"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    # the cheat sheet is its HTML, its TeX and its picture, and the handout's TeX for A4 and Letter; the guide its
    # Markdown and its HTML
    assert re.fullmatch(r"cheatsheet: 5 files, \d+\.\d s", lines[0]), lines
    assert re.fullmatch(r"guide: 2 files, \d+\.\d s", lines[1]), lines
    assert lines[2].startswith("wrote 7 files to ")
    assert run.stderr == ""


def test_only_builds_the_stages_named_and_keeps_an_earlier_builds_other_files(tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(built().out, out)
    earlier = _rows(out)
    (out / "guide.md").write_text("an older guide")  # what the build rewrites: the guide's files, no other
    (out / "reference.md").write_text("an older reference")  # a file of a stage not built: kept as it is
    assert main(["build", "--out", str(out), "--only", "guide", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    rows = _rows(out)
    assert {row["path"] for row in printed["files"]} == set(rows) == set(earlier)
    assert rows["guide.md"] == earlier["guide.md"]  # rewritten: the session build's bytes again
    assert (out / "reference.md").read_text() == "an older reference"
    assert rows["reference.md"]["sha256"] == hashlib.sha256(b"an older reference").hexdigest()  # listed with its bytes
    assert all(rows[path] == earlier[path] for path in set(rows) - {"reference.md"})


def test_only_into_an_empty_folder_writes_that_stage_alone(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["build", "--out", str(out), "--only", "Guide, cheatsheet"]) == 0
    written = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    # no pdf stage asked for: no PDF, and none reported skipped
    assert written == {"guide.md", "guide.html", "cheatsheet.html", "cheatsheet.tex", "cheatsheet-plot.png", "handout-a4.tex",
                       "handout-letter.tex", "manifest.json"}
    assert "skipped" not in capsys.readouterr().out


@pytest.mark.parametrize("only, says", [("reference,slide", "unknown stage 'slide'"), (",", "no stage named")])
def test_an_unknown_stage_is_refused_with_the_stages_listed(tmp_path, capsys, only, says):
    from llm_formulas.render.documents.build import STAGES

    assert main(["build", "--out", str(tmp_path / "out"), "--only", only]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err and ", ".join(STAGES) in err
    assert not (tmp_path / "out").exists()  # refused before anything is written


def test_build_writes_to_site_not_setuptools_build():
    from llm_formulas.render.cli.main import build_parser

    # pip install . fills build/lib and build/bdist.*: the default output folder must be another one
    assert build_parser(["build"]).parse_args(["build"]).out == "site"
    ignored = (Path(__file__).parent.parent / ".gitignore").read_text().split()
    assert "site/" in ignored and "build/" in ignored


def test_the_files_planned_before_rendering_are_the_files_written():
    # build refuses a symlink or a folder at a target before rendering anything: its plan must be complete
    from llm_formulas.render.documents.build import planned_files

    build = built()
    planned = {p.relative_to(build.out).as_posix() for p in planned_files(build.out)}
    assert planned == {row["path"] for row in build.printed["files"]}


def test_a_symlink_at_a_target_is_refused_before_anything_is_rendered(tmp_path, capsys):
    out, precious = tmp_path / "out", tmp_path / "precious.txt"
    out.mkdir()
    precious.write_text("keep me")
    (out / "calculator.html").symlink_to(precious)
    assert main(["build", "--out", str(out), "--no-execute"]) == 2
    assert "did not write it" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["calculator.html"] and precious.read_text() == "keep me"


def test_built_files_are_readable_as_files_the_user_writes():
    # a web server serving site/ runs as another user: files must get the umask's mode, not mkstemp's private 0o600
    import os
    import stat

    umask = os.umask(0)
    os.umask(umask)
    build = built()
    for row in build.printed["files"]:
        mode = stat.S_IMODE(os.stat(build.out / row["path"]).st_mode)
        assert mode == 0o666 & ~umask, (row["path"], oct(mode))
