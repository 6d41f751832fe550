"""`gpuplane compare`: load-test a model's serving variants from inside the cluster and report.

Why this module is the CLI's glue and nothing more: the Job and ConfigMap are built by
`manifests.loadtest`, the load loop is the client (`manifests/loadtest/client.py`, which runs in the pod),
and the report is `infra.compare_report`. Here: read and check the stack and the request (every bad
value is refused with exit 2 before anything is created), upload the inputs, run the Job with the
official `kubernetes` client and the kubeconfig `gpuplane kubeconfig` writes, wait with progress, read
the summary from the Job's log, and write the report. `--plan` prints the objects without a cluster;
`--endpoint VARIANT=URL` runs the same client locally against given URLs (a stand-in, or a port-forward).
"""

from __future__ import annotations

import io
import json
import os
import secrets
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Final

import typer
import yaml
from rich.console import Console

from gpuplane.components.config import NodeGroupArgs, PlatformArgs
from gpuplane.components.workload_checks import WorkloadContext, place, variant_placement
from gpuplane.infra import compare_report
from gpuplane.infra import config as stack_config
from gpuplane.manifests import loadtest, scheduling, versions

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

_err = Console(stderr=True)


class CompareError(Exception):
    """Bad input for `gpuplane compare`: the message names the option or key, the value and what is allowed."""


# --- the serving workloads, as issue 11's stack config declares them ---------------------------------


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

    The placement is the one `gpuplane render` checks (components/workload_checks.py), so the report's
    machine facts name the groups a variant really runs on.
    """
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
    config = stack_config.parse(stack_config.read_stack_file(stack, stacks_dir), stack)
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

    The same check as every workload's (components/workload_checks.py: allocatable after kubelet and
    system DaemonSet reservations): the client needs no GPU, so it goes to an untainted CPU group.
    """
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
        raise RuntimeError(f"the client ran past {timeout_s} s; its last output:\n{stderr[-2000:]}") from None
    for line in stderr.splitlines():
        if line.startswith("[compare]"):
            _err.print(line, highlight=False, markup=False)
    try:
        return parse_summary(stdout)
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}\n{stderr[-2000:]}") from None


# --- the cluster ----------------------------------------------------------------------------------------


def _tar_of(files: Sequence[Path]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in files:
            tar.add(path, arcname=path.name)
    return buffer.getvalue()


class Cluster:
    """The few Kubernetes API calls a run makes, through the official client and a kubeconfig."""

    def __init__(self, kubeconfig: Path) -> None:
        from kubernetes import client, config  # noqa: PLC0415 - only a live run needs it

        if not kubeconfig.is_file():
            raise CompareError(
                f"--kubeconfig: '{kubeconfig}' does not exist; write it with `gpuplane kubeconfig STACK` first"
            )
        api_client = config.new_client_from_config(config_file=str(kubeconfig))
        self.core = client.CoreV1Api(api_client)
        self.batch = client.BatchV1Api(api_client)
        self.networking = client.NetworkingV1Api(api_client)

    def prepare(self, plan: Plan) -> None:
        """Create the ConfigMap and the NetworkPolicy (before any pod of the run exists)."""
        self.core.create_namespaced_config_map(plan.namespace, plan.configmap)
        self.networking.create_namespaced_network_policy(plan.namespace, plan.network_policy)

    def clean_up(self, plan: Plan) -> None:
        """Delete what `prepare` made, when the run stops before its Job exists to own them."""
        name = plan.configmap["metadata"]["name"]
        self.core.delete_namespaced_config_map(name, plan.namespace)
        self.networking.delete_namespaced_network_policy(name, plan.namespace)

    def upload(self, pod: dict[str, Any], files: Sequence[Path], target: str, log: Callable[[str], None]) -> None:
        """Create the uploader pod, stream a tar of `files` into `target` over exec, delete the pod."""
        from kubernetes.stream import stream  # noqa: PLC0415

        namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        self.core.create_namespaced_pod(namespace, pod)
        try:
            deadline = time.monotonic() + 300
            while self.core.read_namespaced_pod(name, namespace).status.phase != "Running":
                if time.monotonic() > deadline:
                    raise RuntimeError(f"uploader pod {namespace}/{name} did not start within 300 s")
                time.sleep(2)
            log(f"uploading {len(files)} images to datasets:{target}")
            data = _tar_of(files)
            # The exec stream cannot signal end-of-input on every API server version, so `head -c` reads
            # exactly the tar's length and then lets tar see EOF and the command exit.
            script = f"mkdir -p '{target}' && head -c {len(data)} | tar -x -f - -C '{target}'"
            session = stream(
                self.core.connect_get_namespaced_pod_exec,
                name,
                namespace,
                command=["sh", "-c", script],
                stdin=True,
                stdout=True,
                stderr=True,
                tty=False,
                _preload_content=False,
                binary=True,
            )
            for offset in range(0, len(data), 1 << 20):
                session.write_stdin(data[offset : offset + (1 << 20)])
            errors = b""
            deadline = time.monotonic() + 300
            while session.is_open() and time.monotonic() < deadline:
                session.update(timeout=5)
                if session.peek_stderr():
                    errors += session.read_stderr()
            code = session.returncode
            session.close()
            if code != 0:
                text = errors.decode(errors="replace") if isinstance(errors, bytes) else str(errors)
                raise RuntimeError(f"upload into datasets:{target} failed (exit {code}): {text[-1000:]}")
        finally:
            self.core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)

    def run_job(self, plan: Plan, progress: Callable[[str], None]) -> str:
        """Create the Job, hand it the ConfigMap and NetworkPolicy (its TTL deletes all three), wait, read the log."""
        namespace, name = plan.namespace, plan.job["metadata"]["name"]
        created = self.batch.create_namespaced_job(namespace, plan.job)
        owner = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": name,
            "uid": created.metadata.uid,
            "blockOwnerDeletion": False,
        }
        owned = {"metadata": {"ownerReferences": [owner]}}
        self.core.patch_namespaced_config_map(name, namespace, owned)
        self.networking.patch_namespaced_network_policy(name, namespace, owned)
        started = time.monotonic()
        limit = plan.job["spec"]["activeDeadlineSeconds"]
        while True:
            status = self.batch.read_namespaced_job_status(name, namespace).status
            pods = self.core.list_namespaced_pod(namespace, label_selector=f"job-name={name}").items
            waiting = _unschedulable(pods)
            elapsed = time.monotonic() - started
            if waiting and elapsed > 600:
                raise RuntimeError(f"job {namespace}/{name} cannot be scheduled: {waiting}")
            phase = pods[0].status.phase if pods else "no pod yet"
            progress(
                f"job {name}: {phase}, {elapsed:.0f} s of at most {limit} s" + (f" ({waiting})" if waiting else "")
            )
            if status.succeeded or status.failed:
                break
            time.sleep(3)
        if not pods:
            raise RuntimeError(f"job {namespace}/{name} finished without a pod")
        log: str = self.core.read_namespaced_pod_log(pods[0].metadata.name, namespace, container="client")
        return log


def _unschedulable(pods: Sequence[Any]) -> str:
    for pod in pods:
        for condition in pod.status.conditions or []:
            if condition.type == "PodScheduled" and condition.status == "False" and condition.reason == "Unschedulable":
                return str(condition.message)
    return ""


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


def command(  # noqa: PLR0917 - typer maps each parameter to an option
    stack: Annotated[str, typer.Argument(help="Stack name: stacks/Pulumi.<stack>.yaml")],
    model: Annotated[str, typer.Option(help="The model to compare (gpuplane:serving[].model.name).")],
    inputs: Annotated[
        Path | None, typer.Option(help="Folder of .jpg/.png images. Default: synthetic images made in the Job.")
    ] = None,
    sizes: Annotated[str, typer.Option(help="Box sizes in px (32-4096), comma-separated.")] = "128,512,2048",
    formats: Annotated[str, typer.Option(help="Encodings: jpeg, png.")] = "jpeg,png",
    concurrency: Annotated[str, typer.Option(help="Concurrent requests (1-256), comma-separated.")] = "1,4,16",
    duration: Annotated[int, typer.Option(help="Seconds per cell (1-3600).")] = 30,
    plan: Annotated[bool, typer.Option("--plan", help="Print the Job and ConfigMap; contact no cluster.")] = False,
    kubeconfig: Annotated[
        Path | None, typer.Option(help="Default: build/<stack>/kubeconfig (from `gpuplane kubeconfig`).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Report folder. Default: build/<stack>/compare/<run id>.")] = None,
    endpoint: Annotated[
        list[str] | None,
        typer.Option(help="VARIANT=URL: run the client here against these URLs instead of a Job in the cluster."),
    ] = None,
    client_cpu: Annotated[str, typer.Option(help="The client's CPU request = limit.")] = loadtest.DEFAULT_CPU,
    client_memory: Annotated[str, typer.Option(help="The client's memory request = limit.")] = loadtest.DEFAULT_MEMORY,
    client_python: Annotated[
        str, typer.Option(help="With --endpoint: the Python with TensorFlow that runs the client.")
    ] = sys.executable,
    stacks_dir: Annotated[Path, typer.Option(help="Where the stack files are.")] = stack_config.STACKS_DIR,
) -> None:
    """Load-test a model's serving variants from inside the cluster; write a table, JSON and an HTML report.

    Exits 2 on bad input (nothing is created), 1 when the run fails.
    """
    try:
        config, all_variants = load_stack(stack, stacks_dir)
    except stack_config.ConfigError as exc:
        _err.print(f"[bold red]Invalid config for stack '{stack}'[/]:")
        for problem in exc.problems:
            _err.print(f"  - {problem}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except CompareError as exc:
        _err.print("[bold red]Error:[/]", end=" ")
        _err.print(str(exc), markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    run_id = new_run_id()
    try:
        request = parse_request(
            model, sizes=sizes, formats=formats, concurrency=concurrency, duration=duration, inputs=inputs
        )
        variants = variants_for_model(all_variants, model)
        the_plan = build_plan(
            config, variants, request, run_id=run_id, client_cpu=client_cpu, client_memory=client_memory
        )
        urls = _parse_endpoints(endpoint, variants) if endpoint else None
        if not plan and urls is None:
            cluster = Cluster(kubeconfig or Path("build") / stack / "kubeconfig")
    except (CompareError, ValueError) as exc:
        _err.print("[bold red]Error:[/]", end=" ")
        _err.print(str(exc), markup=False, highlight=False, soft_wrap=True)
        _err.print("Nothing was created.")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if len(variants) == 1:
        _err.print(
            f"[yellow]Only variant '{variants[0].name}' serves model '{model}': running a single-variant "
            "benchmark (no comparison).[/]"
        )
    if plan:
        typer.echo(yaml.safe_dump_all(the_plan.objects, sort_keys=False), nl=False)
        return
    out_dir = out or Path("build") / stack / "compare" / run_id
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
            with _err.status(f"compare {model}: run {run_id}") as status:
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
        _err.print(f"[bold red]Run {run_id} failed:[/]", end=" ")
        _err.print(str(exc), markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_FAILED) from None
    machine = machine_facts(config.platform, variants, client_cpu, client_memory)
    compare_report.print_report(summary, Console(width=max(Console().width, 140)))
    json_path, html_path = compare_report.write(summary, machine, out_dir)
    _err.print(f"Wrote {json_path} and {html_path}; raw per-request data: {summary.get('raw')}", highlight=False)
