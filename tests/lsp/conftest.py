"""End-to-end fixtures: the real server over stdio, driven by pytest-lsp as VS Code and as Neovim.

`client` starts one server per test, initialised with the capability set of the
parametrised editor. A test can give initializationOptions and
workspace/configuration values with the markers `init_options(dict)` and
`configuration(dict)`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from .helpers import CLIENTS, SERVER, capabilities, make_client


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "init_options(options): initializationOptions for the lsp `client` fixture")
    config.addinivalue_line("markers", "configuration(values): workspace/configuration section 'opgen' of `client`")


EDITING_CHECKS_OFF = {"pytorchFormatCheck": False, "compatibilityBase": "off"}
CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client)


def _marker_value(request: pytest.FixtureRequest, name: str) -> object:
    marker = request.node.get_closest_marker(name)
    return marker.args[0] if marker is not None else None


@pytest_lsp.fixture(config=CONFIG, params=CLIENTS)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):
    configuration = _marker_value(request, "configuration")
    if configuration is not None:
        lsp_client.set_configuration(configuration, section="opgen")
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities(request.param),
        root_uri=tmp_path.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        # The round trip and compatibility checks (lsp.editing) are off unless a test asks for them: they finish
        # apart from the analyses and would race other tests' exact lists of diagnostics.
        initialization_options=_marker_value(request, "init_options") or {"debounceMs": 10, **EDITING_CHECKS_OFF},
    ))
    lsp_client.init_result = result  # type: ignore[attr-defined]
    lsp_client.root = tmp_path  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


