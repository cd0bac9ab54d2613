"""Sweeps: the same table in process, unchunked, and on a local two-worker Dask cluster; each case is ``plan``'s answer."""

import pytest
import sympy as sp

from llm_formulas.formulas.estimate import Inputs, model_values
from llm_formulas.formulas.gpus import gpu
from llm_formulas.formulas.presets import preset
from llm_formulas.render.numeric.plan import plan
from llm_formulas.render.numeric.sweep import Spec, run_in_process, run_on_dask, tasks

SPEC = Spec(models=("llama-7b", "llama2-13b"), gpus=("a100-80gb", "h100-sxm"), sizes=(16, 64), global_batch=128, seq=2048, top=2)


@pytest.fixture(scope="module")
def in_process():
    return run_in_process(SPEC, chunk_size=40)


def test_chunking_does_not_change_the_table(in_process):
    assert len(tasks(SPEC, chunk_size=40)) > 2 * len(tasks(SPEC, chunk_size=10**6))
    assert run_in_process(SPEC, chunk_size=10**6) == in_process


def test_each_case_is_plans_answer(in_process):
    model = model_values(preset("llama2-13b").architecture.values)
    inputs = Inputs(model=model, gpu=gpu("h100-sxm").inputs(), network=25 * 10**9,
                    tokens=None, utilization=sp.Rational(1, 2), overlap=sp.Rational(1, 2))
    expected = plan(model, inputs, 64, 128, 2048, top=2)
    rows = [r for r in in_process if (r["model"], r["gpu"], r["n"]) == ("llama2-13b", "h100-sxm", 64)]
    assert [r["rank"] for r in rows] == [1, 2]
    for entry, got in zip(expected["ranked"], rows):
        assert {k: got[k] for k in entry["layout"]} == entry["layout"]
        assert got["step_seconds"] == entry["step_seconds"] and got["reason"] == entry["reason"]
        assert (got["explored"], got["fitting"]) == (expected["explored"], expected["fitting"])
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
