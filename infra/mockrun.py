"""Run a Pulumi program in-process under mocks and record everything it registers.

Why a monitor of our own: Pulumi's `MockResourceArgs` carries only type, name, inputs, provider and id.
Parents, dependencies, `protect` and `retainOnDelete` reach the monitor's `RegisterResource` request but
not the mocks (`pulumi.runtime.mocks.MockMonitor.RegisterResource` drops them). `RecordingMonitor`
keeps the whole request, so the renderer and the tests can assert on the dependency graph and the
data-safety options, not only inputs.

Values only the cloud knows (ids, ARNs, endpoints) are deterministic placeholders derived from the
resource's URN, so two runs give byte-identical output.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import gc
import hashlib
import logging
import runpy
import string
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import resource as pulumi_resource_runtime
from pulumi.runtime import rpc, settings
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from gpuplane.components.facts import partition
from gpuplane.infra import sdk_imports

ACCOUNT_ID = "123456789012"
SECRET_PLACEHOLDER = "[secret]"


@dataclass
class RecordedResource:
    """One `RegisterResource` request, with what `MockResourceArgs` hides."""

    urn: str
    type: str
    name: str
    id: str | None
    custom: bool
    parent: str | None
    dependencies: list[str]
    provider: str | None
    protect: bool
    retain_on_delete: bool
    deleted_with: str | None
    import_id: str | None
    ignore_changes: list[str]
    hooks: dict[str, list[str]]
    custom_timeouts: dict[str, str]
    """`create`/`update`/`delete` waits the program set (`pulumi.CustomTimeouts`), as the engine is told them."""
    inputs: dict[str, Any]
    outputs: dict[str, Any]


@dataclass
class Recording:
    """Everything a program registered, in registration order, plus its stack outputs."""

    resources: list[RecordedResource] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """What the program logged as Pulumi warnings (`pulumi.log.warn`), in order, each once."""
    component_outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """What each component registered as its outputs (`register_outputs`), by URN: e.g. a TfTraining's run."""

    def by_type(self, type_: str) -> list[RecordedResource]:
        """All resources of one Pulumi type token."""
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str, name: str | None = None) -> RecordedResource:
        """The single resource of `type_` (and `name` if given); fails loudly otherwise."""
        found = [r for r in self.by_type(type_) if name is None or r.name == name]
        if len(found) != 1:
            raise LookupError(f"expected one {type_} named {name!r}, found {[r.name for r in found]}")
        return found[0]

    def get(self, urn: str) -> RecordedResource:
        """The resource with this URN."""
        for resource in self.resources:
            if resource.urn == urn:
                return resource
        raise LookupError(urn)

    def children(self, parent_urn: str) -> list[RecordedResource]:
        """Direct children of a resource."""
        return [r for r in self.resources if r.parent == parent_urn]


def _digest(text: str, length: int, alphabet: str = string.hexdigits[:16]) -> str:
    raw = hashlib.sha256(text.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in raw[:length])


class UnansweredInvoke(Exception):
    """The program called an invoke (a data source) the offline renderer cannot answer."""

    def __init__(self, token: str) -> None:
        super().__init__(
            f"the program calls invoke {token}, which the offline render cannot answer (it answers "
            "getAvailabilityZones, getCallerIdentity, getRegion, getPartition, eks getAddonVersion and AWS's public "
            "ssm parameters); render needs a program "
            "whose data comes from config or from gpuplane's components"
        )
        self.token = token


class PlaceholderMocks(pulumi_mocks.Mocks):
    """Answers resource registrations and invokes with deterministic, plausible cloud values."""

    def __init__(self, region: str) -> None:
        self.region = region
        self.unanswered: list[str] = []
        self.partition = partition.of_region(region)

    def new_resource(self, args: pulumi_mocks.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        """Echo the inputs, plus ids/ARNs/endpoints derived from the URN."""
        key = f"{args.typ}::{args.name}"
        inputs = dict(args.inputs)
        state: dict[str, Any] = dict(inputs)
        kind = args.typ.rsplit(":", 1)[-1]
        service = args.typ.split(":")[1].split("/")[0] if ":" in args.typ else "x"
        prefixes = {
            "Vpc": "vpc",
            "Subnet": "subnet",
            "InternetGateway": "igw",
            "NatGateway": "nat",
            "Eip": "eipalloc",
            "RouteTable": "rtb",
            "SecurityGroup": "sg",
            "LaunchTemplate": "lt",
            "FileSystem": "fs",
            "MountTarget": "fsmt",
            "AccessPoint": "fsap",
        }
        if kind in prefixes:
            resource_id = f"{prefixes[kind]}-{_digest(key, 17)}"
        else:
            given = inputs.get("name")
            resource_id = given if isinstance(given, str) else f"{args.name}-id"
        state.setdefault("arn", f"arn:aws:{service}:{self.region}:{ACCOUNT_ID}:{kind.lower()}/{resource_id}")
        if kind == "Role":
            state["name"] = inputs.get("name", f"{args.name}-{_digest(key, 7)}")
            state["arn"] = f"arn:aws:iam::{ACCOUNT_ID}:role/{state['name']}"
        elif kind == "Key" and service == "kms":
            state["keyId"] = f"{_digest(key, 8)}-0000-4000-8000-{_digest(key + 'k', 12)}"
            state["arn"] = f"arn:aws:kms:{self.region}:{ACCOUNT_ID}:key/{state['keyId']}"
        elif kind == "LaunchTemplate":
            state["latestVersion"] = 1
        elif args.typ == "aws:eks/cluster:Cluster":
            host = _digest(key, 32, "0123456789ABCDEF")
            state["endpoint"] = f"https://{host}.gr7.{self.region}.eks.amazonaws.com"
            state["certificateAuthority"] = {"data": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="}
            state["identities"] = [{"oidcs": [{"issuer": f"https://oidc.eks.{self.region}.amazonaws.com/id/{host}"}]}]
            vpc_config = dict(inputs.get("vpcConfig", {}))
            vpc_config["clusterSecurityGroupId"] = f"sg-{_digest(key + 'sg', 17)}"
            state["vpcConfig"] = vpc_config
            state["arn"] = f"arn:aws:eks:{self.region}:{ACCOUNT_ID}:cluster/{inputs.get('name')}"
        elif args.typ == "aws:eks/nodeGroup:NodeGroup":
            group = inputs.get("nodeGroupName") or f"{inputs.get('nodeGroupNamePrefix', '')}{_digest(key, 8)}"
            state["nodeGroupName"] = group
            state["resources"] = [{"autoscalingGroups": [{"name": f"eks-{group}-{_digest(key, 8)}"}]}]
        elif args.typ == "aws:amp/workspace:Workspace":
            # AMP's ARNs name the service `aps`; the query endpoint ends with a `/` (aws.amp.Workspace docs).
            resource_id = f"ws-{_digest(key, 8)}-0000-4000-8000-{_digest(key + 'w', 12)}"
            state["arn"] = f"arn:aws:aps:{self.region}:{ACCOUNT_ID}:workspace/{resource_id}"
            state["prometheusEndpoint"] = (
                f"https://aps-workspaces.{self.region}.amazonaws.com/workspaces/{resource_id}/"
            )
        elif args.typ == "aws:amp/scraper:Scraper":
            resource_id = f"s-{_digest(key, 8)}-0000-4000-8000-{_digest(key + 's', 12)}"
            state["arn"] = f"arn:aws:aps:{self.region}:{ACCOUNT_ID}:scraper/{resource_id}"
            state["roleArn"] = (
                f"arn:aws:iam::{ACCOUNT_ID}:role/aws-service-role/scraper.aps.amazonaws.com/"
                f"AWSServiceRoleForAmazonPrometheusScraper_{_digest(key, 15)}"
            )
        elif args.typ == "aws:sns/topic:Topic":
            # SNS ARNs end with the topic's name, no `topic/` (SNS API reference, CreateTopic); the render writes
            # this one into observability/alertmanager.yaml and the topic policies.
            state["arn"] = f"arn:aws:sns:{self.region}:{ACCOUNT_ID}:{resource_id}"
        elif args.typ == "aws:iam/openIdConnectProvider:OpenIdConnectProvider":
            url = str(inputs.get("url", "")).removeprefix("https://")
            state["arn"] = f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{url}"
        return resource_id, _in_partition(state, self.partition)

    def call(self, args: pulumi_mocks.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        """Answer the few invokes the program makes (AZs, caller identity, region, partition, versions)."""
        if args.token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            names = [f"{self.region}{suffix}" for suffix in "abcd"]
            return {"names": names, "zoneIds": [f"z{i}" for i in range(len(names))], "id": self.region}, []
        if args.token == "aws:index/getCallerIdentity:getCallerIdentity":
            return {
                "accountId": ACCOUNT_ID,
                "arn": f"arn:aws:iam::{ACCOUNT_ID}:user/render",
                "id": ACCOUNT_ID,
            }, []
        if args.token == "aws:index/getRegion:getRegion":
            return {"name": self.region, "region": self.region, "id": self.region}, []
        if args.token == "aws:index/getPartition:getPartition":
            found = self.partition
            return {"partition": found.id, "dnsSuffix": found.dns_suffix, "id": found.id}, []
        if args.token == "aws:eks/getAddonVersion:getAddonVersion":
            # EKS's default version for the minor is only known to EKS: a placeholder that names the minor asked
            # for, so a plan at a new kubernetesVersion shows every add-on moving with it.
            addon, minor = str(args.args.get("addonName")), str(args.args.get("kubernetesVersion"))
            version = f"[default of {addon} for {minor}]"
            return {"addonName": addon, "kubernetesVersion": minor, "version": version, "id": addon}, []
        name = str(args.args.get("name", ""))
        if args.token == "aws:ssm/getParameter:getParameter" and name.startswith("/aws/service/"):
            # Public parameters AWS publishes (the recommended AMI release of a minor): the name, bracketed.
            value = f"[{name}]"
            return {"name": name, "value": value, "insecureValue": value, "type": "String", "id": name}, []
        self.unanswered.append(args.token)
        raise UnansweredInvoke(args.token)


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """A mock monitor that records every registration request in full."""

    def __init__(self, mocks: pulumi_mocks.Mocks) -> None:
        super().__init__(mocks)
        self.recording = Recording()

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """URNs as the real engine makes them: the parent's qualified type chain, `$`-joined."""
        if parent:
            qualified = parent.split("::")[2]
            if qualified != "pulumi:pulumi:Stack":
                type_ = f"{qualified}${type_}"
        return f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{type_}::{name}"

    def RegisterResourceOutputs(self, request: Any) -> Any:
        """Keep a component's outputs (what the engine stores for it): render reads a TfTraining's run there."""
        self.recording.component_outputs[request.urn] = _inputs_for_plan(request.outputs)
        return super().RegisterResourceOutputs(request)  # type: ignore[no-untyped-call]

    def RegisterResource(self, request: Any) -> Any:
        """Register as the base monitor does, and keep the whole request."""
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        if request.type == "pulumi:pulumi:Stack":
            return response
        deps = set(request.dependencies)
        for prop in request.propertyDependencies.values():
            deps.update(prop.urns)
        hooks: dict[str, list[str]] = {}
        if request.HasField("hooks"):
            for kind in (
                "before_create",
                "after_create",
                "before_update",
                "after_update",
                "before_delete",
                "after_delete",
            ):
                names = list(getattr(request.hooks, kind))
                if names:
                    hooks[kind] = names
        registration = self.resources[response.urn]
        self.recording.resources.append(
            RecordedResource(
                urn=response.urn,
                type=request.type,
                name=request.name,
                id=registration.id,
                custom=bool(request.custom),
                parent=request.parent or None,
                dependencies=sorted(deps - {""}),
                provider=request.provider or None,
                protect=bool(request.protect),
                retain_on_delete=bool(request.retainOnDelete),
                deleted_with=request.deletedWith or None,
                import_id=request.importId or None,
                ignore_changes=list(request.ignoreChanges),
                hooks=hooks,
                custom_timeouts={
                    kind: getattr(request.customTimeouts, kind)
                    for kind in ("create", "update", "delete")
                    if getattr(request.customTimeouts, kind)
                },
                inputs=_inputs_for_plan(request.object),
                outputs=dict(registration.state or {}),
            )
        )
        return response


def _in_partition(state: dict[str, Any], where: partition.Partition) -> dict[str, Any]:
    """Placeholder ARNs and hosts of the stack's partition (`arn:aws-cn:`, `.amazonaws.com.cn`)."""
    if where.id == "aws":
        return state

    def fix(value: Any) -> Any:
        if isinstance(value, str):
            value = value.replace("arn:aws:", f"arn:{where.id}:")
            if where.dns_suffix != "amazonaws.com":
                value = value.replace(".amazonaws.com", f".{where.dns_suffix}")
            return value
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        return value

    return {k: fix(v) for k, v in state.items()}


def _inputs_for_plan(struct: Any) -> dict[str, Any]:
    """Inputs as plain JSON values: secrets become a placeholder, resource references their URN."""
    return dict(_plain(rpc.deserialize_properties(struct, keep_internal=False, keep_unknowns=True)))


async def _resolve(outputs: Mapping[str, Any]) -> dict[str, Any]:
    """Every stack output's plain value (a placeholder for a secret), awaited together.

    Why together: the SDK's `_sync_await` inside the running program pads the event loop's ready list back
    with a cancelled handle for each one it drained, every call. Awaiting each output's secrecy and value
    apart made tens of calls per render and a hundred thousand throw-away handles.
    """
    outs = [pulumi.Output.from_input(value) for value in outputs.values()]
    secret = await asyncio.gather(*(out.is_secret() for out in outs))
    resolved = await asyncio.gather(*(out.future() for out in outs))
    return {
        key: SECRET_PLACEHOLDER if hidden else _plain(value)
        for key, hidden, value in zip(outputs, secret, resolved, strict=True)
    }


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return SECRET_PLACEHOLDER
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, pulumi.Resource):
        return f"[resource {type(value).__name__}]"
    if value is rpc.UNKNOWN:
        return "[unknown]"
    if isinstance(value, float) and value.is_integer():
        return int(value)  # protobuf carries every number as a double; 3.0 was an int in the program
    return value


@contextlib.contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a render, then restore it as it was.

    Why: a render allocates a few hundred thousand objects (the SDK's modules, futures, outputs) on a heap of
    several million; each full collection walks them all, and the default thresholds run dozens. Measured on
    the dev stack: 1 of 3.4 CPU seconds (benchmarks/RESULTS.md). Reference counting still frees everything
    that is not in a cycle; the cycles a render leaves (some tens of MB) are collected once the collector is
    back, in a long-lived process such as the tests, or with the process.
    """
    _freeze_heap_at_exit()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def no_source_positions() -> Iterator[None]:
    """Skip the SDK's capture of where each resource was declared, for a mocked run, then restore it.

    Why: before every registration the SDK walks the whole Python stack (`traceback.extract_stack`, which
    stats and reads the source file of every frame) to tell the engine the file and line of the declaring
    code. Only the engine's diagnostics show them; the mock monitor drops them, and nothing in a render's
    output depends on them. The walk was a quarter of a render's registration time, more under a deep
    caller such as a test runner. An SDK release without `_get_stack_trace` keeps its own behaviour: the
    render is then only slower, never different.
    """
    original = getattr(pulumi_resource_runtime, "_get_stack_trace", None)
    if original is None:
        yield
        return
    pulumi_resource_runtime._get_stack_trace = _no_stack_trace
    try:
        yield
    finally:
        pulumi_resource_runtime._get_stack_trace = original


def _no_stack_trace() -> source_pb2.StackTrace:
    """The empty stack trace the SDK itself sends when it finds no declaring frame (no source position)."""
    return source_pb2.StackTrace()


@functools.cache
def _freeze_heap_at_exit() -> None:
    """At interpreter exit, before its last full collection, move every object out of the collector's reach.

    Why: the last thing the interpreter does is collect the whole heap once more (modules being torn down),
    and after a render that heap holds the SDK's millions of objects: 0.6 of 2.5 CPU seconds of a
    `gpuplane render` process, measured on the dev stack. `gc.freeze()` in an `atexit` hook (which runs
    before that collection) makes the walk skip them; the memory goes back with the process either way.
    """
    atexit.register(gc.freeze)


def _reset_runtime() -> None:
    """Forget the previous run's root stack, so each run starts from a clean runtime."""
    settings.SETTINGS.rpc_manager.clear()
    settings.SETTINGS.outputs.clear()
    settings.ROOT.set(None)


def run(
    program: Callable[[], Mapping[str, Any]],
    project: str,
    stack: str,
    region: str,
    config: Mapping[str, str] | None = None,
) -> Recording:
    """Run `program` under mocks as project/stack and return what it registered and exported.

    `program` returns its stack outputs (name -> value or Output); they are resolved here, secrets
    replaced by a placeholder.
    """
    with no_cycle_collection(), no_source_positions():
        return _run(program, project, stack, region, config)


def _run(
    program: Callable[[], Mapping[str, Any]],
    project: str,
    stack: str,
    region: str,
    config: Mapping[str, str] | None,
) -> Recording:
    sdk_imports.install()  # the SDK modules the program uses, not every module of their services
    mocks = PlaceholderMocks(region)
    monitor = RecordingMonitor(mocks)
    _reset_runtime()
    logged = _WarningLog()
    logger = logging.getLogger(f"{__name__}.engine")
    logger.propagate = False  # the engine's log is the program's output, never Python's root logger
    logger.handlers = [logged]
    pulumi.runtime.set_mocks(monitor.mocks, project=project, stack=stack, preview=False, monitor=monitor, logger=logger)
    pulumi.runtime.set_all_config(dict(config or {}))
    exported: dict[str, Any] = {}

    def body() -> None:
        outputs = program()
        exported.update(_sync_await(_resolve(outputs)))

    try:
        _sync_await(run_pulumi_func(body))
    except Exception:
        if mocks.unanswered:
            raise UnansweredInvoke(mocks.unanswered[0]) from None
        raise
    if mocks.unanswered:
        raise UnansweredInvoke(mocks.unanswered[0])
    monitor.recording.outputs = exported
    monitor.recording.warnings = list(dict.fromkeys(logged.messages))
    return monitor.recording


class _WarningLog(logging.Handler):
    """The mock engine's log: keeps the warnings (and errors) a program logs, as the engine would show them."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep the message text (the engine prints it after `warning:`)."""
        self.messages.append(record.getMessage())


def run_file(main: Path, project: str, stack: str, region: str, config: Mapping[str, str]) -> Recording:
    """Run a Pulumi Python program file (its `main`) under mocks, as the language host would run it.

    Its exports (`pulumi.export`) land in the stack resource's outputs; they are collected from there.
    """
    exports: dict[str, Any] = {}

    def program() -> Mapping[str, Any]:
        original = pulumi.export

        def export(name: str, value: Any) -> None:
            exports[name] = value

        pulumi.export = export
        folder = str(main.parent)
        sys.path.insert(0, folder)
        try:
            runpy.run_path(str(main), run_name="__main__")
        finally:
            pulumi.export = original
            sys.path.remove(folder)
        return exports

    return run(program, project, stack, region, config)
