"""Workspace trust: opgen.generate writes outside the workspace folders only where the user (not a workspace)
set opgen.outputDir; otherwise nothing is written and the client is shown why (window/showMessage)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from opgen_lsp.lsp.trust import inside, user_folder, user_setting, write_refusal

from .helpers import NATIVE, TAGS, open_document, write

pytestmark = pytest.mark.asyncio


def _workspace(client: LanguageClient) -> str:
    path = write(client, "native/native_functions.yaml", NATIVE)
    write(client, "native/tags.yaml", TAGS)
    return open_document(client, path, NATIVE)


async def _generate(client: LanguageClient, uri: str, target: str = "native") -> dict:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.generate", arguments=[{"uri": uri, "target": target}]))


def _outside(client: LanguageClient, name: str) -> Path:
    return (client.root / ".." / name).resolve()  # type: ignore[attr-defined]


@pytest.mark.configuration({"outputDir": "../outside-of-the-workspace"})
async def test_a_workspace_setting_pointing_outside_is_refused(client: LanguageClient):
    outside = _outside(client, "outside-of-the-workspace")
    result = await _generate(client, _workspace(client))
    assert "opgen.outputDir points outside the workspace folders" in result["error"]
    assert str(outside) in result["error"] and "user settings" in result["error"]
    assert any("opgen.outputDir points outside" in m.message and m.type == types.MessageType.Warning
               for m in client.messages)
    assert not outside.exists()


@pytest.mark.init_options({"debounceMs": 10, "outputDir": "/"})
async def test_an_absolute_outside_path_from_the_merged_settings_is_refused(client: LanguageClient):
    """initializationOptions' own keys are the merged settings too (the VS Code extension sends them so)."""
    result = await _generate(client, _workspace(client))
    assert "opgen.outputDir points outside the workspace folders" in result["error"]
    assert not Path("/Functions.h").exists()


@pytest.mark.init_options({"debounceMs": 10, "userSettings": {"outputDir": "../outside-set-by-the-user"}})
@pytest.mark.configuration({"outputDir": "../outside-set-by-the-user"})
async def test_an_outside_folder_the_user_set_is_written(client: LanguageClient):
    outside = _outside(client, "outside-set-by-the-user")
    result = await _generate(client, _workspace(client))
    assert result["errors"] == [] and Path(result["outputDir"]) == outside
    assert (outside / "Functions.h").is_file()


@pytest.mark.init_options({"debounceMs": 10, "userSettings": {"outputDir": "../somewhere-else"}})
@pytest.mark.configuration({"outputDir": "../outside-not-what-the-user-set"})
async def test_the_user_value_must_be_the_one_in_use(client: LanguageClient):
    result = await _generate(client, _workspace(client))
    assert "points outside the workspace folders" in result["error"]
    assert not _outside(client, "outside-not-what-the-user-set").exists()


@pytest.mark.configuration({"outputDir": "generated/inside"})
async def test_a_folder_inside_the_workspace_needs_no_trust(client: LanguageClient):
    result = await _generate(client, _workspace(client))
    assert result["errors"] == [] and (client.root / "generated" / "inside" / "Functions.h").is_file()  # type: ignore


@pytest.mark.filterwarnings("ignore::pytest.PytestWarning")  # a plain test among asyncio ones
def test_the_rule():
    assert inside("/w/a/b", ["/w/a"]) and inside("/w/a", ["/w/a"]) and not inside("/w/ab", ["/w/a"])
    assert write_refusal("opgen.outputDir", "/w/out", ["/w"], None) is None
    assert write_refusal("opgen.outputDir", "/x/out", ["/w"], "/x/out") is None
    assert "outside the workspace folders (/w): /x/out" in write_refusal("opgen.outputDir", "/x/out", ["/w"], None)
    assert user_setting({"userSettings": {"outputDir": "/x"}}, "outputDir") == "/x"
    for options in (None, {}, {"outputDir": "/x"}, {"userSettings": "/x"}, {"userSettings": {"outputDir": 3}}):
        assert user_setting(options, "outputDir") is None


@pytest.mark.filterwarnings("ignore::pytest.PytestWarning")
def test_a_user_folder_reached_through_a_workspace_symlink_is_not_the_users(tmp_path: Path):
    workspace, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    (workspace / "sub").mkdir(parents=True)
    elsewhere.mkdir()
    (workspace / "gen").symlink_to(elsewhere, target_is_directory=True)
    (workspace / "sub" / "deep").symlink_to(elsewhere, target_is_directory=True)
    folders = [str(workspace)]
    for value in ("gen", "gen/x", str(workspace / "gen"), "sub/deep/..", str(workspace / "sub" / "deep" / "x")):
        assert user_folder(value, str(workspace), folders) is None, value
    assert user_folder("../elsewhere", str(workspace), folders) == str(elsewhere)
    assert user_folder(str(elsewhere / "x"), str(workspace), folders) == str(elsewhere / "x")
    assert user_folder("out", str(workspace), folders) == str(workspace / "out")
    (tmp_path / "link-of-the-user").symlink_to(elsewhere, target_is_directory=True)  # outside: the user's own
    assert user_folder(str(tmp_path / "link-of-the-user"), None, folders) == str(elsewhere)
    assert user_folder("relative", None, folders) is None


@pytest.mark.init_options({"debounceMs": 10, "userSettings": {"outputDir": "gen"}})
@pytest.mark.configuration({"outputDir": "gen"})
async def test_a_relative_user_folder_that_a_repository_symlinks_elsewhere_is_refused(client: LanguageClient):
    """A user's relative `gen` and a repository's `gen -> /elsewhere` wrote 128 files outside (issue 27)."""
    elsewhere = _outside(client, f"{client.root.name}-elsewhere")  # type: ignore[attr-defined]
    elsewhere.mkdir()
    (client.root / "gen").symlink_to(elsewhere, target_is_directory=True)  # type: ignore[attr-defined]
    result = await _generate(client, _workspace(client))
    assert "opgen.outputDir points outside the workspace folders" in result["error"]
    assert list(elsewhere.iterdir()) == []
