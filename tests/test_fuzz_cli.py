"""A bounded fuzz run of the command line: random argv never produces a traceback.

The default run tries 600 in-process cases and 16 real processes in hostile surroundings;
set LLM_FORMULAS_FUZZ_CASES=10000 (and LLM_FORMULAS_FUZZ_PROCESSES) for the
full run (its figure is in the closing note of the hardening issue).
"""

import io
import json
import os
import random
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from llm_formulas.formulas.vocabulary.catalogue import all_formulas
from llm_formulas.formulas.vocabulary.symbols import all_quantities
from llm_formulas.render.cli.main import main

CASES = int(os.environ.get("LLM_FORMULAS_FUZZ_CASES", "600"))
COMMANDS = ["list", "show", "eval", "eval", "eval", "params", "params", "frob", "", "--json", "-h"]
ODD_VALUES = ["", "0", "-1", "1.5", "1e9", "1e400", "nan", "inf", "-inf", "1/0", "3/4", "0x10", "1_000", "١٢", "1e-9",
              "9" * 120, "=", "2**10", "__import__('os')", " 7 ", "1e", ".", "+", "1/2/3", "\x00", "None", "True",
              "7B", "2T", "1k", "4kB", "１２", "1__0_", "/".join(["1"] * 5000), "/".join(["1e100", "1e-100"] * 20),
              "1e100/1e-100", "9" * 100_000, "\x1b[31m", "1/2e3k"]
# special files and hostile paths for --hf-config: devices, a folder, stdin by name, escapes and newlines
CONFIG_PATHS = ["/dev/zero", "/dev/urandom", "/dev/null", "/dev/stdin", "/", ".", "nowhere.json", "a\nb\x1b[2J.json",
                "\x00", "-" * 3]


def random_argv(rng: random.Random, ids: list[str], names: list[str]) -> list[str]:
    argv = [rng.choice(COMMANDS)]
    if rng.random() < 0.9:
        argv.append(rng.choice(ids) if rng.random() < 0.8 else rng.choice(ids) + rng.choice(["x", ".", "", " "]))
    for _ in range(rng.randint(0, 6)):
        roll = rng.random()
        if roll < 0.6:
            value = str(rng.randint(1, 10**rng.randint(1, 12))) if rng.random() < 0.5 else rng.choice(ODD_VALUES)
            argv.append(f"{rng.choice(names)}={value}")
        elif roll < 0.75:
            argv.append(rng.choice(["--json", "--latex", "--verbose", "--", "-x", "--out"]))
        else:
            argv.append("".join(rng.choice("ab=1.-/_é\\$ ") for _ in range(rng.randint(0, 8))))
    if argv[0] == "show" and rng.random() < 0.7:
        argv = argv[:2]
    if argv[0] == "params":
        argv = ["params", "--hf-config", rng.choice(CONFIG_PATHS)] + (["--json"] if rng.random() < 0.5 else [])
    return [a for a in argv if a != ""] if rng.random() < 0.5 else argv


def test_random_argv_never_tracebacks():
    rng = random.Random(20261129)
    ids = [f.id for f in all_formulas()]
    names = [q.name for q in all_quantities()] + ["zz", "", "H", "c_flop"]
    outcomes = {0: 0, 2: 0}
    for _ in range(CASES):
        argv = random_argv(rng, ids, names)  # never check or build: those are slow, and tested on their own
        out, err = io.StringIO(), io.StringIO()
        try:
            with redirect_stdout(out), redirect_stderr(err):
                code = main(argv)
        except SystemExit as stop:  # --help exits 0 through argparse
            code = stop.code
        assert code in outcomes, (argv, code)
        assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue(), (argv, err.getvalue())
        if code == 2:
            assert err.getvalue().count("\n") == 1, (argv, err.getvalue())
        outcomes[code] += 1
    assert outcomes[0] > 0 and outcomes[2] > 0


PRESET_CONFIGS = sorted((Path(__file__).resolve().parent.parent / "formulas" / "data" / "models").glob("*.json"))
ODD_JSON_VALUES = [None, True, False, 0, -1, 1.5, float("nan"), 10**40, "64", [], {}, [64], "", 2**31 + 1, 1]


def mutated_config(rng: random.Random) -> str:
    """A real config.json shape, mutated: keys dropped or given odd values, model_type changed, text cut."""
    config = json.loads(rng.choice(PRESET_CONFIGS).read_text())["config"]
    for _ in range(rng.randint(0, 3)):
        roll = rng.random()
        key = rng.choice(sorted(config))
        if roll < 0.3:
            del config[key]
        elif roll < 0.7:
            config[key] = rng.choice(ODD_JSON_VALUES)
        elif roll < 0.85:
            config["model_type"] = rng.choice(["llama", "gpt2", "mixtral", "falcon", "opt", "t5", "", None, 7, "LLAMA"])
        else:
            config[key] = max(1, int(config[key]) // rng.choice([2, 3, 7])) if isinstance(config[key], int) else config[key]
    text = json.dumps(config)
    if rng.random() < 0.1:
        text = text[: rng.randint(0, len(text))]
    return text


def random_model_argv(rng: random.Random, path: str) -> list[str]:
    command = rng.choice(["params", "flops", "estimate"])
    argv = [command, "--hf-config", path]
    if command == "flops":
        argv += ["--batch", rng.choice(["1", "8", "0", "-2", "x"]), "--seq", rng.choice(["128", "2048", "0", "1.5"])]
    if command == "estimate":
        argv += ["--gpu", rng.choice(["a100-80gb", "h100-sxm", "rtx4090", "tpu"]), "--seq", rng.choice(["2048", "4096", "0"])]
        for flag in ("--tp", "--pp", "--dp", "--micro-batch", "--global-batch"):
            if rng.random() < 0.4:
                argv += [flag, rng.choice(["1", "2", "4", "8", "3", "0", "64"])]
        if rng.random() < 0.3:
            argv += ["--zero", rng.choice(["0", "1", "2", "3", "4"]), "--recompute", rng.choice(["none", "selective", "full"])]
    if rng.random() < 0.5:
        argv.append("--json")
    return argv


def test_mutated_configs_never_traceback(tmp_path):
    rng = random.Random(11292026)
    outcomes = {0: 0, 2: 0}
    for case in range(max(1, CASES // 3)):
        path = tmp_path / f"config{case % 7}.json"
        path.write_text(mutated_config(rng))
        argv = random_model_argv(rng, str(path))
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(argv)
        assert code in outcomes, (argv, path.read_text()[:300], err.getvalue())
        assert "Traceback" not in err.getvalue(), (argv, err.getvalue())
        if code == 2:
            assert err.getvalue().count("\n") == 1, (argv, err.getvalue())
        outcomes[code] += 1
    assert outcomes[0] > 0 and outcomes[2] > 0


PROCESS_CASES = int(os.environ.get("LLM_FORMULAS_FUZZ_PROCESSES", "16"))


def test_random_processes_in_hostile_surroundings(tmp_path):
    # real processes: random argv (as above) with a random hostile surrounding: a pipe the reader
    # closes after one line, a full stdout, an ASCII-only encoding, Ctrl-C soon after start, or a
    # hostile --out folder; each ends with a documented exit code and no traceback, within 60 s
    import signal
    import subprocess
    import sys

    rng = random.Random(20261201)
    ids = [f.id for f in all_formulas()]
    names = [q.name for q in all_quantities()]
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "reference.md").symlink_to(tmp_path / "precious.txt")
    (tmp_path / "precious.txt").write_text("keep")
    for case in range(PROCESS_CASES):
        argv = [arg for arg in random_argv(rng, ids, names) if "\x00" not in arg]  # no process can take a NUL argument
        surrounding = rng.choice(["pipe closed", "full", "ascii", "interrupt", "hostile out"])
        if surrounding == "hostile out":
            argv = ["build", "--out", str(tmp_path / "out")]
        env = dict(os.environ, PYTHONIOENCODING="ascii") if surrounding == "ascii" else None
        stdout = open("/dev/full", "wb") if surrounding == "full" else subprocess.PIPE
        process = subprocess.Popen([sys.executable, "-m", "llm_formulas", *argv], stdout=stdout,
                                   stderr=subprocess.PIPE, env=env,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        if surrounding == "pipe closed":
            process.stdout.readline()
            process.stdout.close()
        elif surrounding == "interrupt":
            time.sleep(rng.uniform(0.5, 1.5))  # past the interpreter's own start-up, which no Python code can guard
            process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60) if surrounding != "pipe closed" else (None, process.stderr.read())
        process.wait(timeout=60)
        if stdout is not subprocess.PIPE:
            stdout.close()
        text = err.decode("utf-8", "replace")
        assert process.returncode in (0, 2, 130), (argv, surrounding, process.returncode, text)
        assert "Traceback" not in text and "internal error" not in text and text.count("\n") <= 1, (argv, surrounding, text)
    assert (tmp_path / "precious.txt").read_text() == "keep"
