"""Workspace trust for the one setting that makes the server write files: opgen.outputDir.

A workspace can bring its own settings (`.vscode/settings.json` of a cloned repository, a project's
editor configuration), and workspace/configuration answers with the merged value, whoever set it. So a
folder outside the workspace folders is written only when the user set exactly that value themselves:
the client passes the user-level values in initializationOptions.userSettings (the VS Code extension
takes them from `inspect(key).globalValue`, which no workspace can set; other editors' init options are
the user's own configuration). Inside a workspace folder, any value is used.
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
