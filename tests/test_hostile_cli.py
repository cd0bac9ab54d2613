"""The command line as a hostile or careless user meets it, run as real processes (issue 15).

Special files, fraction chains, odd numerals, closed and full pipes, Ctrl-C, an ASCII-only
terminal and hostile ``--out`` folders: every case ends in a result or one line on stderr
with its documented exit code, never a traceback or a hang.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

COMMAND = [sys.executable, "-m", "llm_formulas"]
LLAMA = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
         "intermediate_size": 128, "vocab_size": 100}


def run(*arguments: str, timeout: float = 30, **options) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *arguments], capture_output=True, timeout=timeout, **options)


def assert_one_line(result: subprocess.CompletedProcess, code: int = 2, *, says: str = "") -> str:
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == code, err
    assert err.count("\n") == 1 and err.startswith("llm-formulas: ") and "Traceback" not in err, err
    assert says in err, err
    return err


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_devices_are_refused_at_once(path):
    # reading /dev/zero never ends: the run's timeout is the hang guard
    assert_one_line(run("params", "--hf-config", path, timeout=120), says="not a regular file")


def test_a_fifo_never_blocks(tmp_path):
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    assert_one_line(run("params", "--hf-config", str(fifo), timeout=10), says="not a regular file")


def test_stdin_is_read_under_the_cap():
    endless = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        result = subprocess.run([*COMMAND, "params", "--hf-config", "-"], stdin=endless.stdout, capture_output=True, timeout=30)
    finally:
        endless.kill()
        endless.wait()
    assert_one_line(result, says="larger than 1000 kB")


def test_stdin_dash_reads_a_config():
    result = run("params", "--hf-config", "-", "--json", input=json.dumps(LLAMA).encode())
    # by hand: embeddings 100·64 + untied head 100·64 + final norm 64
    #          + 2 layers · (4·64² attention + 3·64·128 SwiGLU MLP + 2·64 RMSNorms) = 12,864 + 2·41,088 = 95,040
    assert result.returncode == 0 and json.loads(result.stdout)["total"] == 95040


def test_dev_stdin_names_the_dash():
    result = run("params", "--hf-config", "/dev/stdin", input=b"{}")
    assert_one_line(result, says="- for standard input")


@pytest.mark.parametrize("value, says", [
    ("1/2/3", "more than one '/'"),
    ("6/2/3", "more than one '/'"),
    ("/".join(["1"] * 5000), "at most 100"),
    ("/".join(["1e100", "1e-100"] * 30), "at most 100"),
    ("1e100/1e-100", "out of range"),
    ("١٢٠", "is not a number"),
    ("７６８", "is not a number"),
    ("1__0_", "is not a number"),
    ("9" * 100_000, "at most 100"),
])
def test_numbers_outside_the_grammar(value, says):
    err = assert_one_line(run("eval", "flops.training.approx", f"P={value}", "D=1"), says=says)
    assert len(err) < 300  # a 100,000-digit input is not echoed back


def test_an_error_line_escapes_control_characters():
    err = assert_one_line(run("params", "--hf-config", "a\nb\x1b[31mred.json"), says="cannot read")
    assert "\x1b" not in err and "\\x1b" in err and "\\n" in err


def test_json_never_holds_nan_or_infinity():
    result = run("plan", "--model", "llama2-7b", "--gpu", "a100-80gb", "--gpus", "8", "--global-batch", "8", "--seq",
                 "2048", "--mfu", "1e-100/1e100", "--json")
    assert b"Infinity" not in result.stdout and b"NaN" not in result.stdout
    if result.returncode == 0:
        json.loads(result.stdout)
    else:  # refused as out of range, or as a non-finite result
        assert_one_line(result)


def test_a_closed_pipe_ends_quietly():
    reader = subprocess.Popen([*COMMAND, "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.readline()
    reader.stdout.close()  # `| head -1`
    assert reader.wait(timeout=30) == 0
    assert reader.stderr.read() == b""


def test_a_closed_stdout_is_an_error():
    result = subprocess.run(["bash", "-c", 'exec "$@" >&-', "_", *COMMAND, "list"], capture_output=True, timeout=30)
    assert_one_line(result, says="standard output is closed")


def test_a_full_stdout_is_an_error():
    with open("/dev/full", "w") as full:
        result = subprocess.run([*COMMAND, "list"], stdout=full, stderr=subprocess.PIPE, timeout=30)
    assert_one_line(result, says="No space left")


def _interruptible() -> None:
    """Ctrl-C as at a terminal: a runner that started us in the background may have set SIGINT to ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# each still at work after 2.5 s: a check that proves (a plain one replays the release's record in a second)
@pytest.mark.parametrize("arguments", [["check", "--no-cache"], ["build", "--out", "{tmp}/out", "--no-execute"]])
def test_ctrl_c_is_one_line_and_130(tmp_path, arguments):
    arguments = [a.replace("{tmp}", str(tmp_path)) for a in arguments]
    process = subprocess.Popen([*COMMAND, *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_interruptible)
    time.sleep(2.5)  # well inside the work, past the imports
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=240)
    assert process.returncode == 130 and err == b"llm-formulas: interrupted\n", err


@pytest.mark.parametrize("arguments", [
    ["list"], ["list", "--json"], ["show", "params.total"],
    ["estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", "4096", "--tp", "2"],
])
def test_an_ascii_terminal_gets_ascii(arguments):
    result = run(*arguments, env=dict(os.environ, PYTHONIOENCODING="ascii"))
    assert result.returncode == 0 and result.stderr == b"", result.stderr
    result.stdout.decode("ascii")


def _previous_build_is_whole(out: Path) -> bool:
    """No manifest, an incomplete one (an interrupted build's: it names the tool's files and vouches for no bytes),
    or a complete one whose every file has the bytes it lists."""
    manifest = out / "manifest.json"
    if not manifest.exists():
        return True
    document = json.loads(manifest.read_text())
    if not document.get("complete"):
        return all(set(row) == {"path"} for row in document["files"])
    return all(hashlib.sha256((out / row["path"]).read_bytes()).hexdigest() == row["sha256"] for row in document["files"])


def test_build_never_writes_through_a_symlink_nor_over_a_stranger(tmp_path):
    import shutil

    from build_session import built

    out, precious = tmp_path / "out", tmp_path / "important.txt"
    out.mkdir()
    precious.write_text("keep me")
    (out / "guide.md").symlink_to(precious)
    refused = run("build", "--out", str(out), "--no-execute", timeout=600)
    assert_one_line(refused, says="did not write it")  # at once: symlinks are looked at before anything is rendered
    assert precious.read_text() == "keep me" and (out / "guide.md").is_symlink()
    assert sorted(p.name for p in out.iterdir()) == ["guide.md"]
    # a folder an earlier build wrote (the session's): the manifest makes its files ours, no --force needed;
    # a symlink at one of them is replaced, never written through, and a stranger's file is left alone.
    # The bookkeeping is every stage's: the rebuild is of the cheap ones (the guide, the cheat sheet and its PDF)
    shutil.rmtree(out)
    shutil.copytree(built().out, out)
    (out / "guide.md").unlink()
    (out / "guide.md").symlink_to(precious)
    (out / "plots" / "notes.txt").write_text("mine")
    again = run("build", "--out", str(out), "--only", "guide,cheatsheet,pdf", "--no-pdf", timeout=600)  # PATH's pdflatex never runs
    assert again.returncode == 0, again.stderr
    assert b"skipped cheatsheet.pdf: --no-pdf" in again.stdout
    assert not (out / "cheatsheet.pdf").exists()  # the session's PDF, not remade, is not left beside the new sources
    assert precious.read_text() == "keep me" and not (out / "guide.md").is_symlink()
    assert (out / "plots" / "notes.txt").read_text() == "mine"
    assert _previous_build_is_whole(out) and (out / "manifest.json").exists()
    interrupted = subprocess.Popen([*COMMAND, "build", "--out", str(out), "--no-execute"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   preexec_fn=_interruptible)
    time.sleep(3)
    interrupted.send_signal(signal.SIGINT)
    interrupted.communicate(timeout=600)
    assert _previous_build_is_whole(out)
    assert not list(out.rglob("*.partial"))


def test_force_replaces_a_strangers_symlink_without_following_it(tmp_path):
    # what `build --force` does at each file, shown on one: the symlink is replaced, its target untouched
    from llm_formulas.render.documents.safe_write import OutputError, Ownership, write_atomically

    precious, link = tmp_path / "important.txt", tmp_path / "reference.tex"
    precious.write_text("keep me")
    link.symlink_to(precious)
    with pytest.raises(OutputError, match="did not write it"):
        Ownership().precheck("reference.tex", link)
    Ownership(force=True).precheck("reference.tex", link)
    assert Ownership(force=True).check("reference.tex", link, b"new")
    write_atomically(link, b"new")
    assert precious.read_text() == "keep me" and not link.is_symlink() and link.read_bytes() == b"new"


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))


def test_a_full_disk_is_one_line_and_leaves_no_partial_file(tmp_path):
    out = tmp_path / "out"
    result = subprocess.run([*COMMAND, "build", "--out", str(out), "--no-execute"], capture_output=True, timeout=600, preexec_fn=_limit_file_size)
    assert_one_line(result, says="cannot write")
    assert _previous_build_is_whole(out) and not list(out.rglob("*.partial"))  # no manifest that vouches for a byte


def test_a_file_where_a_folder_must_be_is_bad_input(tmp_path):
    (tmp_path / "plots").write_text("x")
    assert_one_line(run("build", "--out", str(tmp_path / "plots" / "deeper"), timeout=600), says="where a folder must be")


def test_an_unwritable_folder_is_bad_input():
    # /proc refuses new entries even to root (a read-only folder would not stop root)
    assert_one_line(run("build", "--out", "/proc/llm-formulas-out", timeout=600), says="cannot write")


def test_sweep_help_documents_the_scheduler():
    result = run("sweep", "--help")
    assert result.returncode == 0 and b"--scheduler" in result.stdout and b"--workers" in result.stdout
