"""Read-only files that libraries re-read for every call, read once per test process instead.

Why: three libraries the tests drive thousands of times redo the same work on every call, and the suite is
bound by CPU on two cores.

- `kubernetes_validate.validate` parses the Kubernetes JSON schema of the object's kind and the whole
  `_definitions.json` again for every object it validates.
- Every new boto3 session gets a botocore data loader of its own, which parses the service's model files
  again (EC2's is several MB of JSON); the product makes one session per command, the tests hundreds.
- `typer.testing.CliRunner.invoke` builds the click command tree of the whole CLI again for every call.

Each result depends only on the files each library ships and on the arguments, so it is kept per
process, keyed by those arguments, and nothing a test checks changes. Nothing is read from the project.
A library is patched only once it is loaded (after collection, which imports every test module), so a
nested pytest run that never loads it does not pay for the import.
"""

from __future__ import annotations

import functools
import sys
from typing import Any


def install() -> None:
    """Keep, for this process, what the libraries already loaded would otherwise read again."""
    for module, attr in _READERS.values():
        loaded = sys.modules.get(module)
        if loaded is not None and not hasattr(getattr(loaded, attr), "cache_info"):
            setattr(loaded, attr, functools.cache(getattr(loaded, attr)))


# name -> (module, function): each function is looked up by that name inside its module when it is called.
_READERS = {
    "schemas": ("kubernetes_validate.utils", "schema_contents"),
    "loader": ("botocore.session", "create_loader"),
    "command": ("typer.testing", "_get_command"),
}


def installed() -> dict[str, Any]:
    """The functions `install` replaced, by name (for its test)."""
    return {name: getattr(sys.modules[m], attr) for name, (m, attr) in _READERS.items() if m in sys.modules}
