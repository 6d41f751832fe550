"""`gpuplane verify` end to end through the CLI, on fake clusters: exit codes, files, `--plan`, refusals."""

from __future__ import annotations

import _thread
import json
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gpuplane.infra.cli import app
from gpuplane.infra.verify import command
from tests import shipped
from tests.verify.fakes import FakeAws, FakeCluster, active_addons, healthy_nodes, stack_expect

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, ["verify", *args, "--project", str(shipped.project())])


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_plan_prints_every_probe_without_a_cluster(stack):
    done = invoke(stack, "--plan")
    assert done.exit_code == 0, done.output
    objects = list(yaml.safe_load_all(done.stdout))
    kinds = [o["kind"] for o in objects]
    assert kinds[:2] == ["Namespace", "ConfigMap"] and kinds.count("Pod") >= 4
    assert all(o["metadata"]["labels"]["gpuplane.io/verify-run"] for o in objects)


def test_plan_with_only_prints_that_checks_probes():
    done = invoke("dev", "--plan", "--only", "runtime")
    assert done.exit_code == 0, done.output
    names = [o["metadata"]["name"] for o in yaml.safe_load_all(done.stdout)]
    assert len(names) == 4 and names[2].startswith("gv-deny-ingress-") and names[3].startswith("gv-runtime-")


def test_plan_with_second_az_prints_the_placeholder_pod_before_the_storage_probes():
    done = invoke("dev", "--plan", "--only", "storage", "--second-az")
    assert done.exit_code == 0, done.output
    names = [o["metadata"]["name"] for o in yaml.safe_load_all(done.stdout)]
    assert [n.split("-2")[0] for n in names[3:]] == ["gv-second-az", "gv-deny-ingress", "gv-storage-0", "gv-storage-1"]
    plain = invoke("dev", "--plan", "--only", "storage")
    assert not [o for o in yaml.safe_load_all(plain.stdout) if o["metadata"]["name"].startswith("gv-second-az-")]


def test_second_az_without_an_autoscaler_is_bad_input(tmp_path: Path):
    text = shipped.DEV.read_text()
    (tmp_path / "Pulumi.dev.yaml").write_text(text + "  gpuplane:autoscaler:\n    enabled: false\n")
    done = runner.invoke(
        app, ["verify", "dev", "--second-az", "--stacks-dir", str(tmp_path), "--project", str(shipped.project())]
    )
    assert done.exit_code == 2, done.output
    assert "--second-az: the stack runs no cluster-autoscaler (gpuplane:autoscaler.enabled is false)" in " ".join(
        done.output.split()
    )
    assert "Nothing was created." in done.output


def test_second_az_reaches_the_checks(fake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from gpuplane.infra.verify import runner as verify_runner  # noqa: PLC0415

    seen: list[bool] = []
    original = verify_runner.Runner._context

    def spy(self, check, cancel, last):
        ctx = original(self, check, cancel, last)
        seen.append(ctx.second_az)
        return ctx

    monkeypatch.setattr(verify_runner.Runner, "_context", spy)
    done = invoke("dev", "--only", "nodes", "--second-az", "--out", str(tmp_path / "r"))
    assert done.exit_code == 0, done.output
    assert seen and all(seen)


def test_an_unknown_check_is_bad_input():
    done = invoke("dev", "--only", "gpus")
    assert done.exit_code == 2
    assert "--only: unknown checks ['gpus']; this stack's checks: api, nodes" in done.output
    assert "Nothing was created." in done.output


def test_a_missing_kubeconfig_is_bad_input(tmp_path: Path):
    done = invoke("dev", "--kubeconfig", str(tmp_path / "none"))
    assert done.exit_code == 2
    assert "does not exist; write it with `gpuplane kubeconfig dev` first" in " ".join(done.output.split())


def test_invalid_stack_config_exits_2(tmp_path: Path):
    (tmp_path / "Pulumi.bad.yaml").write_text("config:\n  gpuplane:nodeGroups: 3\n")
    done = runner.invoke(app, ["verify", "bad", "--stacks-dir", str(tmp_path), "--project", str(shipped.project())])
    assert done.exit_code == 2 and "gpuplane:nodeGroups" in done.output


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    expect = stack_expect("dev")
    cluster = FakeCluster(healthy_nodes(expect))
    aws = FakeAws(active_addons(expect))
    monkeypatch.setattr(command, "_cluster", lambda *_args: cluster)
    monkeypatch.setattr(command, "_aws", lambda _config, _profile: aws)
    return cluster


def test_a_healthy_run_exits_0_and_writes_the_report(fake, tmp_path: Path):
    done = invoke("dev", "--only", "nodes", "--only", "addons", "--out", str(tmp_path / "r"), "--json")
    assert done.exit_code == 0, done.output
    document = json.loads((tmp_path / "r" / "report.json").read_text())
    assert [c["name"] for c in document["checks"]] == ["api", "nodes", "addons"]
    assert document["ok"] is True and document["counts"] == {"pass": 3, "fail": 0, "skipped": 0}
    assert (tmp_path / "r" / "report.html").is_file()
    assert json.loads(done.stdout[done.stdout.index("{") : done.stdout.rindex("}") + 1])["runId"] == document["runId"]


def test_a_failing_check_exits_1(fake, tmp_path: Path):
    fake.version = "1.30"
    done = invoke("dev", "--only", "nodes", "--out", str(tmp_path / "r"))
    assert done.exit_code == 1
    document = json.loads((tmp_path / "r" / "report.json").read_text())
    assert [(c["name"], c["status"]) for c in document["checks"]] == [("api", "fail"), ("nodes", "skipped")]


def test_the_default_report_folder_is_under_dot_gpuplane(fake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    project = tmp_path / "p"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text(shipped.PULUMI_YAML.read_text())
    (project / "stacks" / "Pulumi.dev.yaml").write_text(shipped.DEV.read_text())
    done = runner.invoke(app, ["verify", "dev", "--only", "api", "--project", str(project)])
    assert done.exit_code == 0, done.output
    runs = list((project / ".gpuplane" / "dev" / "verify").iterdir())
    assert len(runs) == 1 and (runs[0] / "report.json").is_file()
    assert not (project / "build").exists()


def test_ctrl_c_exits_130_after_cleaning_up(fake, tmp_path: Path, ctrl_c):
    def interrupted_version() -> str:
        _thread.interrupt_main()
        time.sleep(0.5)
        return "1.36"

    fake.server_version = interrupted_version
    done = invoke("dev", "--only", "nodes", "--out", str(tmp_path / "r"))
    assert done.exit_code == 130, done.output
    document = json.loads((tmp_path / "r" / "report.json").read_text())
    assert document["interrupted"] is True
    assert {c["name"]: c["status"] for c in document["checks"]}["nodes"] == "skipped"


def test_no_project_is_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["verify", "dev", "--plan"])
    assert done.exit_code == 2
    assert "no Pulumi.yaml in" in " ".join(done.output.split())


def test_plan_from_a_subfolder_finds_the_project(monkeypatch: pytest.MonkeyPatch):
    (shipped.project() / "docs").mkdir(exist_ok=True)
    monkeypatch.chdir(shipped.project() / "docs")
    done = runner.invoke(app, ["verify", "dev", "--plan", "--only", "storage"])
    assert done.exit_code == 0, done.output
    objects = list(yaml.safe_load_all(done.stdout))
    # Storage runs in the workload namespace only: the run's own namespace is not made for it.
    assert [(o["kind"], o["metadata"]["namespace"]) for o in objects] == [
        ("NetworkPolicy", "ml"),
        ("Pod", "ml"),
        ("Pod", "ml"),
    ]


def test_plan_of_checks_that_create_nothing_is_empty():
    done = invoke("dev", "--plan", "--only", "nodes", "--only", "addons")
    assert done.exit_code == 0, done.output
    assert done.stdout.strip() in ("", "[]")
