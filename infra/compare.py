"""`gpuplane compare`: load-test a model's serving variants from inside the cluster and report.

Why this module is the CLI's glue and nothing more: the Job and ConfigMap are built by
`manifests.loadtest`, the load loop is the client (`manifests/loadtest/client.py`, which runs in the pod),
the Kubernetes calls are `infra.kube` and the report is `infra.compare_report`. Here: read and check the
stack and the request (every bad value is refused with exit 2 before anything is created), upload the
inputs and run the Job (`kube.JobRunner`, with the kubeconfig `gpuplane kubeconfig` writes), wait with
progress, read the summary from the Job's log, and write the report (in the project's
`.gpuplane/<stack>/compare/<run id>/`, which no render touches). `--plan` prints the objects without a cluster;
`--endpoint VARIANT=URL` runs the same client locally against given URLs (a stand-in, or a port-forward).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from gpuplane.infra.options import (
    KubeconfigOption,
    ProjectOption,
    StackArgument,
    StacksDirOption,
    cluster_failed,
    console,
    error,
    kube_source,
    load_or_exit,
    looked_up,
    project_or_exit,
    styled,
)
from gpuplane.infra.untrusted import shown
from gpuplane.manifests import loadtest

if TYPE_CHECKING:
    from gpuplane.components.config import NodeGroupArgs, PlatformArgs
    from gpuplane.infra import config as stack_config

# Start-up: `gpuplane --help` imports this module to list the command; the components, the manifests and
# the Kubernetes client are imported by the functions that use them.

EXIT_BAD_INPUT: Final = 2
EXIT_FAILED: Final = 1
SIZE_RANGE: Final = (32, 4096)
CONCURRENCY_RANGE: Final = (1, 256)
DURATION_RANGE: Final = (1, 3600)
FORMATS: Final = ("jpeg", "png")
REST_PORT: Final = 8501
READY_TIMEOUT_S: Final = 600
# Per-cell allowance on top of the measured duration (warm-up requests, connection set-up).
CELL_MARGIN_S: Final = 30


class CompareError(Exception):
    """Bad input for `gpuplane compare`: the message names the option or key, the value and what is allowed."""


# --- the serving workloads, as the stack config's `gpuplane:serving` declares them -----------------------


@dataclass(frozen=True)
class Variant:
    """One serving variant of one serving workload: what the report and the fit check need from it."""

    serving: str
    model: str
    name: str
    gpus: int = 0
    replicas: int = 1
    cpu_limit: str | None = None
    memory_limit: str | None = None
    node_groups: tuple[str, ...] = ()

    @property
    def service(self) -> str:
        """The variant's own ClusterIP Service (`<serving>-<variant>`, components/serving.py)."""
        return f"{self.serving}-{self.name}"


def serving_variants(platform: PlatformArgs) -> list[Variant]:
    """Every serving variant of the stack, with the node groups it is placed on.

    The placement is the one `gpuplane render` checks (components/plan/placement.py), so the report's
    machine facts name the groups a variant really runs on.
    """
    from gpuplane.components.plan.placement import WorkloadContext, variant_placement  # noqa: PLC0415

    context = WorkloadContext.of(platform)
    found: list[Variant] = []
    for serving in platform.serving:
        for variant in serving.variants:
            placement = variant_placement(serving, variant, context)
            found.append(
                Variant(
                    serving=serving.name,
                    model=serving.model.name,
                    name=variant.name,
                    gpus=variant.resources.gpus,
                    replicas=variant.replicas,
                    cpu_limit=variant.resources.limits.get("cpu"),
                    memory_limit=variant.resources.limits.get("memory"),
                    node_groups=tuple(g.name for g in placement.groups),
                )
            )
    return found


def load_stack(stack: str, stacks_dir: Path) -> tuple[stack_config.StackConfig, list[Variant]]:
    """The validated stack and its serving variants (ConfigError for invalid config, as `render` reports it)."""
    from gpuplane.infra import config as stack_config  # noqa: PLC0415

    config = stack_config.load(stack, stacks_dir)
    return config, serving_variants(config.platform)


def variants_for_model(variants: Sequence[Variant], model: str) -> list[Variant]:
    """The variants that serve `model`; CompareError naming the models that are served when none does."""
    chosen = [v for v in variants if v.model == model]
    if not chosen:
        served = sorted({v.model for v in variants})
        raise CompareError(
            f"--model: no serving variant serves model '{model}'; served models: {', '.join(served) or 'none'} "
            "(gpuplane:serving[].model.name)"
        )
    return chosen


# --- the request --------------------------------------------------------------------------------------


def _in_range(option: str, values: Sequence[int], bounds: tuple[int, int], unit: str = "") -> None:
    low, high = bounds
    bad = [v for v in values if not low <= v <= high]
    if bad:
        raise CompareError(f"{option}: {bad} out of range; allowed {low}-{high}{unit}")


def _int_list(option: str, text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CompareError(f"{option}: '{text}' is not a comma-separated list of whole numbers") from None
    if not values:
        raise CompareError(f"{option}: '{text}' names no value")
    return sorted(set(values))


@dataclass(frozen=True)
class Request:
    """A checked `gpuplane compare` request."""

    model: str
    sizes: list[int]
    formats: list[str]
    concurrency: list[int]
    duration_s: int
    inputs: list[Path] = field(default_factory=list)


def parse_request(
    model: str, *, sizes: str, formats: str, concurrency: str, duration: int, inputs: Path | None
) -> Request:
    """Check every option against its range; CompareError with the option, the bad value and what is allowed."""
    size_list = _int_list("--sizes", sizes)
    _in_range("--sizes", size_list, SIZE_RANGE, " px")
    concurrency_list = _int_list("--concurrency", concurrency)
    _in_range("--concurrency", concurrency_list, CONCURRENCY_RANGE)
    _in_range("--duration", [duration], DURATION_RANGE, " s per cell")
    format_list = [f.strip().lower() for f in formats.split(",") if f.strip()]
    format_list = ["jpeg" if f == "jpg" else f for f in format_list]
    bad = [f for f in format_list if f not in FORMATS]
    if bad or not format_list:
        raise CompareError(f"--formats: {bad or formats!r} not allowed; allowed: {', '.join(FORMATS)}")
    files: list[Path] = []
    if inputs is not None:
        if not inputs.is_dir():
            raise CompareError(f"--inputs: '{inputs}' is not a directory")
        files = sorted(p for p in inputs.iterdir() if p.is_file() and p.suffix.lower() in (".jpg", ".jpeg", ".png"))
        if not files:
            raise CompareError(f"--inputs: '{inputs}' holds no images; allowed: .jpg, .jpeg, .png files")
    return Request(model, size_list, list(dict.fromkeys(format_list)), concurrency_list, duration, files)


# --- can the Job be scheduled? ------------------------------------------------------------------------


def check_fits(platform: PlatformArgs, cpu: str, memory: str) -> str:
    """The node group the client Job can run on; CompareError naming the largest node otherwise.

    The same check as every workload's (components/plan/placement.py: allocatable after kubelet and
    system DaemonSet reservations): the client needs no GPU, so it goes to an untainted CPU group.
    """
    from gpuplane.components.plan.placement import place  # noqa: PLC0415
    from gpuplane.manifests import scheduling  # noqa: PLC0415

    try:
        cpu_millis, memory_bytes = scheduling.cpu_millicores(cpu), scheduling.memory_bytes(memory)
    except ValueError as exc:
        raise CompareError(f"--client-cpu/--client-memory: {exc}") from None
    try:
        placement = place(
            "the load-test Job (--client-cpu/--client-memory)",
            cpu_millis=cpu_millis,
            memory_bytes=memory_bytes,
            gpus=0,
            groups=platform.resolved_node_groups,
        )
    except ValueError as exc:
        raise CompareError(f"{exc}. Lower --client-cpu/--client-memory or add a larger CPU node group") from None
    return placement.groups[0].name


# --- machine facts --------------------------------------------------------------------------------------


def _groups_for(variant: Variant, groups: Sequence[NodeGroupArgs]) -> list[NodeGroupArgs]:
    return [g for g in groups if g.name in variant.node_groups]


def machine_facts(
    platform: PlatformArgs, variants: Sequence[Variant], client_cpu: str, client_memory: str
) -> dict[str, Any]:
    """Instance types, limits, GPU model and sharing per variant, from the stack config and the catalog.

    Without an explicit node group, a GPU variant can land on any GPU group and a CPU variant on any CPU
    group, so all candidates are listed.
    """
    from gpuplane.manifests import versions  # noqa: PLC0415

    groups = platform.resolved_node_groups
    rows = []
    for v in variants:
        chosen = _groups_for(v, groups)
        gpu_groups = [g for g in chosen if g.kind == "gpu"]
        rows.append(
            {
                "name": v.name,
                "serving": v.serving,
                "service": v.service,
                "nodeGroups": [g.name for g in chosen],
                "instanceTypes": sorted({t for g in chosen for t in g.instance_types}),
                "cpuLimit": v.cpu_limit,
                "memoryLimit": v.memory_limit,
                "gpus": v.gpus,
                "replicas": v.replicas,
                "gpuModel": ", ".join(sorted({g.instance.gpu_model or "" for g in gpu_groups})) or None
                if v.gpus
                else None,
                "gpuSharing": ", ".join(sorted({g.sharing.mode for g in gpu_groups})) or None if v.gpus else None,
            }
        )
    return {
        "variants": rows,
        "client": {"cpu": client_cpu, "memory": client_memory, "image": versions.TENSORFLOW_CPU_IMAGE},
    }


# --- the run's objects ----------------------------------------------------------------------------------


def new_run_id() -> str:
    """A short, sortable, unique DNS label: UTC time plus random hex."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def client_config(
    run_id: str, request: Request, urls: dict[str, str], out_dir: str, inputs_dir: str | None
) -> dict[str, Any]:
    """The client's config.json (see `Run.from_json` in the client)."""
    return {
        "runId": run_id,
        "model": request.model,
        "variants": urls,
        "sizes": request.sizes,
        "formats": request.formats,
        "concurrency": request.concurrency,
        "durationS": request.duration_s,
        "outDir": out_dir,
        "inputsDir": inputs_dir,
        "readyTimeoutS": READY_TIMEOUT_S,
    }


def cluster_urls(variants: Sequence[Variant], namespace: str) -> dict[str, str]:
    """Each variant's REST address inside the cluster (its own Service, port `http`)."""
    return {v.name: f"http://{v.service}.{namespace}.svc:{REST_PORT}" for v in variants}


def deadline_s(request: Request, variant_count: int) -> int:
    """The Job's activeDeadlineSeconds: readiness wait, every cell with its margin, and slack for start-up."""
    cells = variant_count * len(request.sizes) * len(request.formats) * len(request.concurrency)
    return READY_TIMEOUT_S + cells * (request.duration_s + CELL_MARGIN_S) + 300


@dataclass(frozen=True)
class Plan:
    """What a run creates in the cluster."""

    run_id: str
    namespace: str
    configmap: dict[str, Any]
    job: dict[str, Any]
    uploader: dict[str, Any] | None
    network_policy: dict[str, Any]

    @property
    def objects(self) -> list[dict[str, Any]]:
        """Everything the run creates, in the order it creates them."""
        first = [self.configmap, self.network_policy]
        return first + ([self.uploader] if self.uploader else []) + [self.job]


def build_plan(
    config: stack_config.StackConfig,
    variants: Sequence[Variant],
    request: Request,
    *,
    run_id: str,
    client_cpu: str,
    client_memory: str,
) -> Plan:
    """The ConfigMap, Job (and inputs uploader pod) of one run, checked to fit the stack's nodes."""
    platform = config.platform
    check_fits(platform, client_cpu, client_memory)
    if request.inputs and "datasets" not in platform.storage.volume_names:
        raise CompareError("--inputs: the stack has no `datasets` volume (gpuplane:storage.volumes) to upload into")
    if "logs" not in platform.storage.volume_names:
        raise CompareError("the stack has no `logs` volume (gpuplane:storage.volumes) for the raw results")
    namespace = platform.workload_namespace
    uid = platform.storage.uid if platform.storage.uid > 10000 else loadtest.DEFAULT_UID
    gid = platform.storage.gid
    inputs_dir = f"{loadtest.DATASETS_MOUNT}/{loadtest.RUNS_SUBDIR}/{run_id}" if request.inputs else None
    settings = client_config(
        run_id,
        request,
        cluster_urls(variants, namespace),
        f"{loadtest.LOGS_MOUNT}/{loadtest.RUNS_SUBDIR}",
        inputs_dir,
    )
    job = loadtest.job(
        namespace,
        run_id,
        servings=sorted({v.serving for v in variants}),
        uid=uid,
        gid=gid,
        active_deadline_s=deadline_s(request, len(variants)),
        with_inputs=bool(request.inputs),
        cpu=client_cpu,
        memory=client_memory,
    )
    uploader = loadtest.uploader_pod(namespace, run_id, uid=uid, gid=gid) if request.inputs else None
    servings = sorted({v.serving for v in variants})
    return Plan(
        run_id,
        namespace,
        loadtest.configmap(namespace, run_id, settings),
        job,
        uploader,
        loadtest.network_policy(namespace, run_id, servings=servings),
    )


# --- the client's answer ------------------------------------------------------------------------------


def parse_summary(log: str) -> dict[str, Any]:
    """The summary JSON from the client's output (the last marker line); RuntimeError if absent or an error."""
    lines = [line for line in log.splitlines() if line.startswith("GPUPLANE-COMPARE-SUMMARY ")]
    if not lines:
        tail = "\n".join(log.splitlines()[-20:])
        raise RuntimeError(f"the client printed no summary; its last output:\n{tail}")
    summary: dict[str, Any] = json.loads(lines[-1].split(" ", 1)[1])
    if "error" in summary:
        raise RuntimeError(f"the client stopped: {summary['error']}")
    return summary


def run_local(
    plan: Plan, urls: dict[str, str], *, inputs: Sequence[Path], out_dir: Path, python: str, timeout_s: int
) -> dict[str, Any]:
    """Run the very client the Job would run, here, against the given URLs (a stand-in or a port-forward)."""
    settings = json.loads(plan.configmap["data"][loadtest.CONFIG_FILE])
    work = out_dir / "client"
    work.mkdir(parents=True, exist_ok=True)
    settings["variants"] = urls
    settings["outDir"] = str(out_dir / "raw")
    settings["inputsDir"] = str(inputs[0].parent) if inputs else None
    (work / loadtest.CLIENT_FILE).write_text(loadtest.client_source())
    (work / loadtest.CONFIG_FILE).write_text(json.dumps(settings, indent=2))
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONDONTWRITEBYTECODE": "1"}
    process = subprocess.Popen(
        [python, str(work / loadtest.CLIENT_FILE), str(work / loadtest.CONFIG_FILE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        raise RuntimeError(f"the client ran past {timeout_s} s; its last output:\n{shown(stderr[-2000:])}") from None
    for line in stderr.splitlines():
        if line.startswith("[compare]"):  # the client pod's words: control characters shown, length bounded
            console().print(shown(line), highlight=False, markup=False)
    try:
        return parse_summary(stdout)
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}\n{stderr[-2000:]}") from None


# --- the command ------------------------------------------------------------------------------------------


def _parse_endpoints(values: Sequence[str], variants: Sequence[Variant]) -> dict[str, str]:
    known = [v.name for v in variants]
    urls: dict[str, str] = {}
    for value in values:
        name, sep, url = value.partition("=")
        if not sep or not url.startswith(("http://", "https://")):
            raise CompareError(f"--endpoint: '{value}' must be VARIANT=http://host:port")
        if name not in known:
            raise CompareError(f"--endpoint: variant '{name}' does not serve this model; its variants: {known}")
        urls[name] = url
    missing = [n for n in known if n not in urls]
    if missing:
        raise CompareError(f"--endpoint: no URL for variant(s) {missing}; give one VARIANT=URL per variant")
    return urls


def register(app: typer.Typer) -> None:
    """Add the `compare` command to the gpuplane CLI."""
    app.command(name="compare")(command)


def command(  # noqa: PLR0917 - typer maps each parameter to an option
    stack: StackArgument,
    model: Annotated[str, typer.Option(help="The model to compare (gpuplane:serving[].model.name).")],
    inputs: Annotated[
        Path | None,
        typer.Option(callback=looked_up, help="Folder of .jpg/.png images. Default: synthetic images made in the Job."),
    ] = None,
    sizes: Annotated[str, typer.Option(help="Box sizes in px (32-4096), comma-separated.")] = "128,512,2048",
    formats: Annotated[str, typer.Option(help="Encodings: jpeg, png.")] = "jpeg,png",
    concurrency: Annotated[str, typer.Option(help="Concurrent requests (1-256), comma-separated.")] = "1,4,16",
    duration: Annotated[int, typer.Option(help="Seconds per cell (1-3600).")] = 30,
    plan: Annotated[bool, typer.Option("--plan", help="Print the Job and ConfigMap; contact no cluster.")] = False,
    kubeconfig: KubeconfigOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            callback=looked_up,
            help="Report folder, taken as given (relative to the current folder). Default: "
            ".gpuplane/<stack>/compare/<run id> in the project (never inside a render's folder).",
        ),
    ] = None,
    endpoint: Annotated[
        list[str] | None,
        typer.Option(
            metavar="VARIANT=URL",
            help="Run the client here against this URL for VARIANT instead of a Job in the cluster; repeat.",
        ),
    ] = None,
    client_cpu: Annotated[str, typer.Option(help="The client's CPU request = limit.")] = loadtest.DEFAULT_CPU,
    client_memory: Annotated[str, typer.Option(help="The client's memory request = limit.")] = loadtest.DEFAULT_MEMORY,
    client_python: Annotated[
        str, typer.Option(help="With --endpoint: the Python with TensorFlow that runs the client.")
    ] = sys.executable,
    stacks_dir: StacksDirOption = None,
    project_dir: ProjectOption = None,
) -> None:
    """Load-test a model's serving variants from inside the cluster; write a table, JSON and an HTML report.

    Exits 2 on bad input (nothing is created), 1 when the run fails.
    """
    from gpuplane.infra import compare_report, kube, kubeaccess  # noqa: PLC0415
    from gpuplane.infra import project as paths  # noqa: PLC0415

    err = console()
    nothing = "Nothing was created."
    project = project_or_exit(project_dir, stacks_dir, nothing=nothing)
    config = load_or_exit(stack, project, nothing=nothing)
    run_id = new_run_id()
    try:
        all_variants = serving_variants(config.platform)
        request = parse_request(
            model, sizes=sizes, formats=formats, concurrency=concurrency, duration=duration, inputs=inputs
        )
        variants = variants_for_model(all_variants, model)
        the_plan = build_plan(
            config, variants, request, run_id=run_id, client_cpu=client_cpu, client_memory=client_memory
        )
        urls = _parse_endpoints(endpoint, variants) if endpoint else None
        if not plan and urls is None:
            cluster = kube.JobRunner(kube_source(kubeconfig, project, stack, config))
    except kube.KubeError as exc:
        raise cluster_failed(exc, None, nothing=nothing) from None
    except (CompareError, ValueError) as exc:
        error(str(exc))
        err.print(nothing)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if len(variants) == 1:
        err.print(
            styled(
                (
                    f"Only variant '{variants[0].name}' serves model '{model}': running a single-variant "
                    "benchmark (no comparison).",
                    "yellow",
                )
            ),
            soft_wrap=True,
        )
    if plan:
        import yaml  # noqa: PLC0415

        typer.echo(yaml.safe_dump_all(the_plan.objects, sort_keys=False), nl=False)
        return
    out_dir = out or paths.compare_dir(project, stack, run_id)
    if out is None:  # the project's .gpuplane/ is private: 0700 folders, never through a link
        try:
            kubeaccess.private_folders(project.root / paths.STATE_DIR, out_dir)
        except (kubeaccess.KubeError, OSError) as exc:
            error(str(exc))
            err.print(nothing)
            raise typer.Exit(EXIT_BAD_INPUT) from None
    try:
        if urls is not None:
            summary = run_local(
                the_plan,
                urls,
                inputs=request.inputs,
                out_dir=out_dir,
                python=client_python,
                timeout_s=deadline_s(request, len(variants)),
            )
        else:
            with err.status(f"compare {model}: run {run_id}") as status:
                cluster.prepare(the_plan)
                if the_plan.uploader is not None:
                    target = f"{loadtest.DATASETS_MOUNT}/{loadtest.RUNS_SUBDIR}/{run_id}"
                    try:
                        cluster.upload(the_plan.uploader, request.inputs, target, status.update)
                    except Exception:
                        cluster.clean_up(the_plan)
                        raise
                log = cluster.run_job(the_plan, status.update)
            summary = parse_summary(log)
    except Exception as exc:
        connection = getattr(cluster, "connection", None) if urls is None else None
        if connection is not None and kubeaccess.is_client_failure(exc):
            exc = kubeaccess.explain(exc, connection)
        error(str(exc), f"Run {run_id} failed:")
        raise typer.Exit(EXIT_FAILED) from None
    machine = machine_facts(config.platform, variants, client_cpu, client_memory)
    compare_report.print_report(summary, console(stderr=False, wide=True))
    json_path, html_path = compare_report.write(summary, machine, out_dir)
    err.print(f"Wrote {json_path} and {html_path}; raw per-request data: {summary.get('raw')}", soft_wrap=True)
