"""The torch releases opgen knows, and what changed between them: one place, passed explicitly.

Each torch release's torchgen is the reference for that release. A `Release` (profile.py) is a frozen profile of
one release: every behaviour of torchgen that changed between the releases opgen knows is a field, named after what
it does. changelog.py states each change once, with the release it arrives in, and folds them into the profiles
(`RELEASES`, `release_at("2.6")`). Rules, the model, the emitters and the template engine take the profile as a
parameter; nothing else compares versions. resolution.py finds the release of the inputs; release_ops.py (the ops
each release added, removed or changed), torchgen_digests.py and tree_release.py (whether a tree's own torchgen is
its release's) are the tables and checks beside it. docs/releases.md says how to add a release.
"""

from .changelog import RELEASES, release_at
from .profile import Release, as_patched_by_backend
from .resolution import (
    CONTENT_SOURCE,
    DEFAULT,
    NEWEST,
    OLDEST,
    Fit,
    Resolved,
    default_resolved,
    detect,
    known_range,
    migration_note,
    parse_version,
    recognise,
    release_diagnostics,
    release_tags,
    resolve,
    resolve_for,
    resolve_for_autograd,
    schema_change_note,
    server_version_text,
    torch_cpu_cuda_kernel_op,
    versions_text,
)

__all__ = [
    "CONTENT_SOURCE", "DEFAULT", "NEWEST", "OLDEST", "RELEASES", "Fit", "Release", "Resolved", "as_patched_by_backend",
    "default_resolved", "detect", "known_range", "migration_note", "parse_version", "recognise", "release_at", "release_diagnostics",
    "release_tags", "resolve", "resolve_for", "resolve_for_autograd", "schema_change_note", "server_version_text",
    "torch_cpu_cuda_kernel_op", "versions_text",
]
