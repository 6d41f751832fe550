"""Kubernetes' limits on names and label values (k8s.io/apimachinery `pkg/util/validation`).

Why in the facts layer: the schema checks a workload's own name against them (`config.workloads`) and
the plan checks every name derived from several keys (`plan.names`); both read the one statement here.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["DNS1035_LABEL_MAX", "DNS1035_LABEL_RE", "LABEL_VALUE_MAX"]

# Kubernetes name limits (k8s.io/apimachinery/pkg/util/validation).
DNS1035_LABEL_MAX: Final = 63
LABEL_VALUE_MAX: Final = 63
# A DNS-1035 label: what a Service name, a JobSet name and a workload name must be on its own.
DNS1035_LABEL_RE: Final = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
