"""Sweeps: the same table in process, unchunked, and on a local two-worker Dask cluster; each case is ``plan``'s answer."""

import pytest
import sympy as sp

from llm_formulas.render.numeric.sweep import Spec, run_in_process, run_on_dask, tasks

SPEC = Spec(models=("llama-7b", "llama2-13b"), gpus=("a100-80gb", "h100-sxm"), sizes=(16, 64), global_batch=128, seq=2048, top=2)


@pytest.fixture(scope="module")
def in_process():
    return run_in_process(SPEC, chunk_size=40)


def test_chunking_does_not_change_the_table(in_process):
    assert len(tasks(SPEC, chunk_size=40)) > 2 * len(tasks(SPEC, chunk_size=10**6))
    assert run_in_process(SPEC, chunk_size=10**6) == in_process


def _plans_first(model: str, gpu_key: str, n: int, global_batch: int, seq: int, *extra: str) -> dict:
    """``plan``'s first layout, read from the command line's JSON (plan's own inputs: read_inputs, its defaults)."""
    import io
    import json
    from contextlib import redirect_stdout

    from llm_formulas.render.cli.main import main

    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["plan", "--model", model, "--gpu", gpu_key, "--gpus", str(n), "--global-batch", str(global_batch),
                     "--seq", str(seq), "--top", "1", "--json", *extra])
    assert code == 0
    return json.loads(out.getvalue())["ranked"][0]


LAYOUT_KEYS = ("t", "p", "d", "b", "m", "v", "c", "e", "zero", "recompute", "sequence_parallel")


@pytest.mark.parametrize("model, gpu_key, n, global_batch, seq", [
    ("llama2-7b", "a100-80gb", 64, 512, 4096),  # issue 37 item 18: the sweep put t=8 c=2 d=4 first, plan t=1 d=64 ZeRO 3
    ("llama2-13b", "h100-sxm", 64, 128, 2048),
    ("llama-7b", "a100-80gb", 16, 128, 2048),
])
def test_without_an_mfu_the_sweep_ranks_as_plan_predicts(model, gpu_key, n, global_batch, seq):
    first = _plans_first(model, gpu_key, n, global_batch, seq)
    (got,) = run_in_process(Spec(models=(model,), gpus=(gpu_key,), sizes=(n,), global_batch=global_batch, seq=seq))
    assert {key: got[key] for key in LAYOUT_KEYS} == {key: first["layout"][key] for key in LAYOUT_KEYS}
    assert got["step_seconds"] == first["step_seconds"] and got["ranked_by"] == "predicted step time"


def test_the_issues_case_ranks_plans_layout_first_on_dask():
    first = _plans_first("llama2-7b", "a100-80gb", 64, 512, 4096)
    spec = Spec(models=("llama2-7b",), gpus=("a100-80gb",), sizes=(64,), global_batch=512, seq=4096)
    (got,) = run_on_dask(spec, chunk_size=2000, workers=2, processes=False, show_progress=False)
    assert {key: got[key] for key in LAYOUT_KEYS} == {key: first["layout"][key] for key in LAYOUT_KEYS}


def test_a_given_mfu_ranks_as_plan_with_mfu_and_is_named_in_the_table():
    first = _plans_first("llama2-13b", "h100-sxm", 64, 128, 2048, "--mfu", "0.5")
    spec = Spec(models=("llama2-13b",), gpus=("h100-sxm",), sizes=(64,), global_batch=128, seq=2048,
                utilization=sp.Rational(1, 2))
    (got,) = run_in_process(spec)
    assert {key: got[key] for key in LAYOUT_KEYS} == {key: first["layout"][key] for key in LAYOUT_KEYS}
    assert got["ranked_by"] == "given MFU 0.5"


def test_each_case_is_plans_answer(in_process):
    rows = [r for r in in_process if (r["model"], r["gpu"], r["n"]) == ("llama2-13b", "h100-sxm", 64)]
    assert [r["rank"] for r in rows] == [1, 2]
    first = _plans_first("llama2-13b", "h100-sxm", 64, 128, 2048)
    assert {key: rows[0][key] for key in LAYOUT_KEYS} == {key: first["layout"][key] for key in LAYOUT_KEYS}
    assert len(in_process) == 2 * 2 * 2 * 2  # models × GPUs × sizes × top


def test_local_two_worker_dask_cluster_gives_the_same_table(in_process):
    # threads (processes=False): a process cluster costs seconds of start-up on a 2-core machine
    assert run_on_dask(SPEC, chunk_size=40, workers=2, processes=False, show_progress=False) == in_process


def test_a_scheduler_address_when_given(in_process):
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        assert run_on_dask(SPEC, scheduler=cluster.scheduler_address, chunk_size=40, show_progress=False) == in_process


SPEC_TOML = """
models = ["llama-7b", "llama2-13b"]
gpus = ["a100-80gb"]
sizes = [16, 64]
global_batch = 128
seq = 2048
top = 2
"""


def test_the_sweep_command_gives_one_table_in_process_and_on_dask(tmp_path):
    # issue 15: `sweep SPEC --out FILE`, in process, on a local cluster of worker processes (--workers 2),
    # and on a running scheduler (--scheduler ADDR): the same CSV bytes each way
    import subprocess
    import sys

    from dask.distributed import LocalCluster

    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC_TOML)
    command = [sys.executable, "-m", "llm_formulas", "sweep", str(spec)]
    tables = {}
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        for name, extra in (("in process", []), ("local workers", ["--workers", "2"]),
                            ("scheduler", ["--scheduler", cluster.scheduler_address])):
            out = tmp_path / f"{name.replace(' ', '-')}.csv"
            run = subprocess.run(command + ["--out", str(out)] + extra, capture_output=True, text=True, timeout=300)
            assert run.returncode == 0, run.stderr
            tables[name] = out.read_text()
    first = tables["in process"]
    assert all(table == first for table in tables.values())
    rows = first.splitlines()
    assert rows[0].startswith("model,gpu,n,rank,t,p,d,b,m,v") and len(rows) == 1 + 2 * 1 * 2 * 2  # header + cases × top
    expected = run_in_process(Spec(models=("llama-7b", "llama2-13b"), gpus=("a100-80gb",), sizes=(16, 64),
                                   global_batch=128, seq=2048, top=2))
    assert [row.split(",")[:10] for row in rows[1:]] == [
        [str(r[k]) for k in ("model", "gpu", "n", "rank", "t", "p", "d", "b", "m", "v")] for r in expected]


def test_without_an_mfu_a_gpu_with_no_performance_constants_is_one_line(tmp_path, capsys):
    # a100-pcie has no calibration run and no datasheet relation to the A100 (formulas/data/calibration.py): no prediction
    from llm_formulas.render.cli.main import main

    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC_TOML.replace('"a100-80gb"', '"a100-pcie"'))
    assert main(["sweep", str(spec), "--out", str(tmp_path / "t.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a100-pcie has no performance constants" in err and "give mfu in the spec" in err
    spec.write_text(SPEC_TOML.replace('"a100-80gb"', '"a100-pcie"') + "mfu = 0.4\n")
    assert main(["sweep", str(spec), "--out", str(tmp_path / "t.csv")]) == 0
    assert "given MFU 0.4" in (tmp_path / "t.csv").read_text()
