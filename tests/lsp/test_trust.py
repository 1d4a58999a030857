"""Workspace trust: opgen.generate writes outside the workspace folders only where the user (not a workspace)
set opgen.outputDir; otherwise nothing is written and the client is shown why (window/showMessage)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from opgen_lsp.lsp.trust import inside, user_setting, write_refusal

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
