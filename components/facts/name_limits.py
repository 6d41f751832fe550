"""Kubernetes' rules for names, keys and label values (k8s.io/apimachinery `pkg/util/validation`).

Why in the facts layer, once: the schema checks names, label and taint keys, namespaces and class names
against them (`config`), and the plan checks every name derived from several keys (`plan.names`); each
rule is stated here and nowhere else.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "DNS1035_LABEL_MAX",
    "DNS1035_LABEL_RE",
    "DNS1123_LABEL_RE",
    "DNS1123_SUBDOMAIN_RE",
    "LABEL_VALUE_MAX",
    "LABEL_VALUE_RE",
    "QUALIFIED_NAME_RE",
]

# Kubernetes name limits (k8s.io/apimachinery/pkg/util/validation).
DNS1035_LABEL_MAX: Final = 63
LABEL_VALUE_MAX: Final = 63
# A DNS-1035 label: what a Service name, a JobSet name and a workload name must be on its own.
DNS1035_LABEL_RE: Final = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
# A DNS-1123 label: a namespace, a volume (claim) name.
DNS1123_LABEL_RE: Final = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
# A DNS-1123 subdomain (at most 253): an IngressClass name, the prefix of a label or taint key.
_SUBDOMAIN: Final = r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?"
DNS1123_SUBDOMAIN_RE: Final = re.compile(_SUBDOMAIN)
# The name part of a qualified name, and a label value when not empty (at most 63).
_NAME: Final = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
# A label or taint key: an optional DNS-1123 subdomain prefix and '/', then a name.
QUALIFIED_NAME_RE: Final = re.compile(rf"({_SUBDOMAIN}/)?{_NAME}")
LABEL_VALUE_RE: Final = re.compile(rf"({_NAME})?")
