"""Strict JSON Schemas of the Kueue v1beta2 objects gpuplane writes, written from the upstream API.

Source: kubernetes-sigs/kueue v0.19.2 (2026-08-20), `apis/kueue/v1beta2/*_types.go` and the generated CRDs in
`config/components/crd/bases/`, read with the look-up tools. Facts, not copied files: at every level we write,
every field the API has is listed (so a field the API lacks is refused: `additionalProperties: false`), with the
types, enums, patterns, limits and required fields of the CRD. Fields we never write are listed with a loose
type (they exist; we do not check their content). CEL rules (`x-kubernetes-validations`) are checked in
`cel_problems` for the few that bear on what we write.
"""

from __future__ import annotations

from typing import Any, Final

import jsonschema

DNS_SUBDOMAIN: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
QUANTITY: Final = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
ANY: Final[dict[str, Any]] = {}


def obj(properties: dict[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    """An object with exactly these properties."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
        **extra,
    }


def name(max_length: int = 253, pattern: str = DNS_SUBDOMAIN) -> dict[str, Any]:
    return {"type": "string", "maxLength": max_length, "pattern": pattern}


METADATA: Final = obj(
    {
        "name": name(),
        "namespace": name(63, r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
        "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 63}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    ("name",),
)

TAINT: Final = obj(
    {
        "key": {"type": "string"},
        "value": {"type": "string"},
        "effect": {"type": "string", "enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"]},
        "timeAdded": {"type": "string"},
    },
    ("effect", "key"),
)


def kind(kind_name: str, spec: dict[str, Any], namespaced: bool = False) -> dict[str, Any]:
    """A whole object of `kueue.x-k8s.io/v1beta2`."""
    metadata = dict(METADATA)
    if namespaced:
        metadata = {**METADATA, "required": ["name", "namespace"]}
    else:
        metadata = {**METADATA, "properties": {k: v for k, v in METADATA["properties"].items() if k != "namespace"}}
    return obj(
        {
            "apiVersion": {"const": "kueue.x-k8s.io/v1beta2"},
            "kind": {"const": kind_name},
            "metadata": metadata,
            "spec": spec,
        },
        ("apiVersion", "kind", "metadata", "spec"),
    )


RESOURCE_FLAVOR: Final = kind(
    "ResourceFlavor",
    obj(
        {
            "nodeLabels": {"type": "object", "maxProperties": 8, "additionalProperties": {"type": "string"}},
            "nodeTaints": {"type": "array", "maxItems": 8, "items": TAINT},
            "tolerations": {"type": "array", "maxItems": 8},
            "topologyName": name(),
        }
    ),
)

RESOURCE_QUOTA: Final = obj(
    {
        "name": {"type": "string"},
        "nominalQuota": {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": QUANTITY}]},
        "borrowingLimit": ANY,
        "lendingLimit": ANY,
    },
    ("name", "nominalQuota"),
)

CLUSTER_QUEUE: Final = kind(
    "ClusterQueue",
    obj(
        {
            "admissionChecksStrategy": obj(
                {
                    "admissionChecks": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": 64,
                        "items": obj(
                            {
                                "name": {"type": "string", "maxLength": 316},
                                "onFlavors": {"type": "array", "maxItems": 64, "items": name()},
                            },
                            ("name",),
                        ),
                    }
                },
                ("admissionChecks",),
            ),
            "admissionScope": ANY,
            "cohortName": name(),
            "concurrentAdmissionPolicy": ANY,
            "fairSharing": ANY,
            # apis/kueue/v1beta2/clusterqueue_types.go at v0.19.2: Enum={MayStopSearch,TryNextFlavor} for both.
            "flavorFungibility": obj(
                {
                    "whenCanBorrow": {"enum": ["MayStopSearch", "TryNextFlavor"]},
                    "whenCanPreempt": {"enum": ["MayStopSearch", "TryNextFlavor"]},
                    "preference": {"enum": ["BorrowingOverPreemption", "PreemptionOverBorrowing"]},
                }
            ),
            "namespaceSelector": obj(
                {
                    "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "matchExpressions": {"type": "array"},
                }
            ),
            "preemption": ANY,
            "queueingStrategy": {"enum": ["StrictFIFO", "BestEffortFIFO"]},
            "resourceGroups": {
                "type": "array",
                "maxItems": 16,
                "items": obj(
                    {
                        "coveredResources": {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": 64,
                            "items": {"type": "string"},
                        },
                        "flavors": {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": 64,
                            "items": obj(
                                {
                                    "name": name(),
                                    "resources": {
                                        "type": "array",
                                        "minItems": 1,
                                        "maxItems": 64,
                                        "items": RESOURCE_QUOTA,
                                    },
                                },
                                ("name", "resources"),
                            ),
                        },
                    },
                    ("coveredResources", "flavors"),
                ),
            },
            "stopPolicy": {"enum": ["None", "Hold", "HoldAndDrain"]},
        }
    ),
)

LOCAL_QUEUE: Final = kind(
    "LocalQueue",
    obj({"clusterQueue": name(), "fairSharing": ANY, "stopPolicy": {"enum": ["None", "Hold", "HoldAndDrain"]}}),
    namespaced=True,
)

ADMISSION_CHECK: Final = kind(
    "AdmissionCheck",
    obj(
        {
            "controllerName": {"type": "string", "maxLength": 253},
            "parameters": obj(
                {
                    "apiGroup": name(),
                    "kind": {"type": "string", "maxLength": 63, "pattern": r"^[A-Za-z]([-A-Za-z0-9]*[A-Za-z0-9])?$"},
                    "name": name(63, r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
                },
                ("apiGroup", "kind", "name"),
            ),
        },
        ("controllerName",),
    ),
)

PROVISIONING_REQUEST_CONFIG: Final = kind(
    "ProvisioningRequestConfig",
    obj(
        {
            "provisioningClassName": name(),
            "parameters": {"type": "object", "maxProperties": 100},
            "managedResources": {"type": "array", "maxItems": 100, "items": {"type": "string"}},
            "retryStrategy": obj(
                {
                    "backoffLimitCount": {"type": "integer"},
                    "backoffBaseSeconds": {"type": "integer"},
                    "backoffMaxSeconds": {"type": "integer"},
                }
            ),
            "podSetUpdates": ANY,
            "podSetMergePolicy": {"enum": ["IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements"]},
        },
        ("provisioningClassName",),
    ),
)

SCHEMAS: Final = {
    "ResourceFlavor": RESOURCE_FLAVOR,
    "ClusterQueue": CLUSTER_QUEUE,
    "LocalQueue": LOCAL_QUEUE,
    "AdmissionCheck": ADMISSION_CHECK,
    "ProvisioningRequestConfig": PROVISIONING_REQUEST_CONFIG,
}

# config.kueue.x-k8s.io/v1beta2 Configuration (apis/config/v1beta2/configuration_types.go): the top-level
# fields (ControllerManager is inlined) and the sub-objects we write.
DURATION: Final = {"type": "string", "pattern": r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$"}
CONFIGURATION: Final = obj(
    {
        "apiVersion": {"const": "config.kueue.x-k8s.io/v1beta2"},
        "kind": {"const": "Configuration"},
        "namespace": {"type": "string"},
        "webhook": obj({"port": {"type": "integer"}, "host": {"type": "string"}, "certDir": {"type": "string"}}),
        "leaderElection": obj(
            {
                "leaderElect": {"type": "boolean"},
                "resourceName": {"type": "string"},
                "resourceNamespace": {"type": "string"},
                "resourceLock": {"type": "string"},
                "leaseDuration": DURATION,
                "renewDeadline": DURATION,
                "retryPeriod": DURATION,
            }
        ),
        "metrics": obj(
            {
                "bindAddress": {"type": "string"},
                "enableClusterQueueResources": {"type": "boolean"},
                "customLabels": {"type": "array"},
                "localQueueMetrics": ANY,
            }
        ),
        "health": obj(
            {
                "healthProbeBindAddress": {"type": "string"},
                "readinessEndpointName": {"type": "string"},
                "livenessEndpointName": {"type": "string"},
            }
        ),
        "pprofBindAddress": {"type": "string"},
        "controller": obj(
            {
                "groupKindConcurrency": {"type": "object", "additionalProperties": {"type": "integer"}},
                "cacheSyncTimeout": ANY,
            }
        ),
        "tls": ANY,
        "manageJobsWithoutQueueName": {"type": "boolean"},
        "managedJobsNamespaceSelector": obj(
            {
                "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
                "matchExpressions": {"type": "array"},
            }
        ),
        "internalCertManagement": ANY,
        "waitForPodsReady": obj(
            {
                "timeout": DURATION,
                "blockAdmission": {"type": "boolean"},
                "requeuingStrategy": obj(
                    {
                        "timestamp": {"enum": ["Eviction", "Creation"]},
                        "backoffLimitCount": {"type": ["integer", "null"], "minimum": 0},
                        "backoffBaseSeconds": {"type": "integer"},
                        "backoffMaxSeconds": {"type": "integer"},
                    }
                ),
                "recoveryTimeout": DURATION,
            },
            ("timeout",),
        ),
        "clientConnection": obj({"qps": {"type": "number"}, "burst": {"type": "integer"}}),
        "integrations": obj(
            {
                "frameworks": {
                    "type": "array",
                    "items": {
                        "enum": [
                            "batch/job",
                            "kubeflow.org/mpijob",
                            "ray.io/rayjob",
                            "ray.io/rayservice",
                            "ray.io/raycluster",
                            "jobset.x-k8s.io/jobset",
                            "kubeflow.org/paddlejob",
                            "kubeflow.org/pytorchjob",
                            "kubeflow.org/tfjob",
                            "kubeflow.org/xgboostjob",
                            "kubeflow.org/jaxjob",
                            "trainer.kubeflow.org/trainjob",
                            "workload.codeflare.dev/appwrapper",
                            "sparkoperator.k8s.io/sparkapplication",
                            "pod",
                            "deployment",
                            "statefulset",
                            "leaderworkerset.x-k8s.io/leaderworkerset",
                        ]
                    },
                },
                "externalFrameworks": {"type": "array"},
                "labelKeysToCopy": {"type": "array"},
            }
        ),
        "multiKueue": ANY,
        "fairSharing": ANY,
        "admissionFairSharing": ANY,
        "resources": ANY,
        "featureGates": {"type": "object", "additionalProperties": {"type": "boolean"}},
        "objectRetentionPolicies": ANY,
        "visibilityServer": ANY,
    },
    ("apiVersion", "kind"),
)


def problems(doc: dict[str, Any]) -> list[str]:
    """Every way `doc` breaks the v1beta2 API (schema, then the CEL rules that bear on what we write)."""
    schema = SCHEMAS.get(doc.get("kind", ""))
    if schema is None:
        return [f"kind {doc.get('kind')!r} is not one we check"]
    validator = jsonschema.Draft202012Validator(schema)
    found = [f"{'.'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
    return found + cel_problems(doc)


def cel_problems(doc: dict[str, Any]) -> list[str]:
    """The CRDs' CEL rules on what we write (clusterqueue and resourceflavor x-kubernetes-validations)."""
    found = []
    spec = doc.get("spec", {})
    if doc.get("kind") == "ClusterQueue":
        for group in spec.get("resourceGroups", []):
            covered = group["coveredResources"]
            for flavor in group["flavors"]:
                # "flavors must have the same number of resources as the coveredResources"; Kueue's webhook also
                # wants them in the same order.
                if [r["name"] for r in flavor["resources"]] != covered:
                    found.append(f"flavor {flavor['name']}: resources {flavor['resources']} do not follow {covered}")
                if "cohortName" not in spec and any("borrowingLimit" in r for r in flavor["resources"]):
                    found.append("borrowingLimit must be nil when cohort is empty")
    return found


def configuration_problems(config: dict[str, Any]) -> list[str]:
    """Every way a manager Configuration breaks the v1beta2 config API."""
    validator = jsonschema.Draft202012Validator(CONFIGURATION)
    return [f"{'.'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in validator.iter_errors(config)]
