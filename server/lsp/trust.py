"""Workspace trust for the one setting that makes the server write files: opgen.outputDir.

A workspace can bring its own settings (`.vscode/settings.json` of a cloned repository, a project's
editor configuration), and workspace/configuration answers with the merged value, whoever set it. So a
folder outside the workspace folders is written only when the user set exactly that value themselves:
the client passes the user-level values in initializationOptions.userSettings (the VS Code extension
takes them from `inspect(key).globalValue`, which no workspace can set; other editors' init options are
the user's own configuration). Inside a workspace folder, any value is used.

The user's folder is found by real paths (issue 27): the user's value is followed component by component, and
when it passes through a symbolic link that lies inside a workspace folder (one a repository can ship: `gen ->
/elsewhere` for a user's relative `gen`), the workspace decides where it leads, so it is not the user's folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

USER_SETTINGS = "userSettings"


def user_setting(initialization_options: object, key: str) -> str | None:
    """The value the user (not a workspace) gave `key`, from initializationOptions.userSettings."""
    if not isinstance(initialization_options, Mapping):
        return None
    user = initialization_options.get(USER_SETTINGS)
    value = user.get(key) if isinstance(user, Mapping) else None
    return value if isinstance(value, str) and value.strip() else None


def user_folder(value: str, root: str | None, folders: Sequence[str]) -> str | None:
    """The real path the user's own value of an output folder names (relative values from the workspace root),
    None when the workspace can decide where it leads: through a symbolic link inside a workspace folder."""
    path = os.path.expanduser(value)
    if not os.path.isabs(path):
        if not root:
            return None
        path = os.path.join(root, path)
    current = os.sep
    for part in path.split(os.sep):
        if part in ("", os.curdir):
            continue
        if part == os.pardir:
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, part)
        if os.path.islink(candidate):
            if inside(current, folders):
                return None  # a link the workspace holds: it, not the user, says where this leads
            candidate = os.path.realpath(candidate)
        current = candidate
    return current


def inside(path: str, folders: Sequence[str]) -> bool:
    """Whether the real path `path` is one of the folders (real paths) or under one."""
    return any(os.path.commonpath([folder, path]) == folder for folder in folders)


def write_refusal(setting: str, path: str, folders: Sequence[str], user_path: str | None) -> str | None:
    """Why the server must not write into `path` (the real path `setting` names); None when it may: inside
    a workspace folder, or exactly where the user's own value of the setting points (user_path, resolved
    the same way)."""
    if inside(path, folders) or path == user_path:
        return None
    where = ", ".join(folders) if folders else "none open"
    return (f"{setting} points outside the workspace folders ({where}): {path}. A workspace's settings may not "
            f"make opgen write there; set {setting} in your user settings to write there (in VS Code: "
            "Preferences: Open User Settings), or choose a folder inside the workspace")
