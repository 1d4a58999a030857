"""One source for each editor's set-up snippet: the README shows docs/editors.md's minimal snippet as it is.

The snippet is read from docs/editors.md (the block after `<!-- nvim-minimal -->` / `<!-- emacs-minimal -->`,
which the editor tests run, followed by the options and commands of `<!-- nvim-config -->` / `<!-- emacs-config
-->`); the README must hold a fenced block of the same language with the identical text (indentation of a list
item aside), wherever it is placed."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def docs_block(language: str, marker: str) -> str:
    text = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    m = re.search(rf"<!-- {re.escape(marker)} -->\s*```{language}\n(.*?)```", text, re.S)
    assert m, f"docs/editors.md has no {language} block after <!-- {marker} -->"
    return m.group(1)


def readme_blocks(language: str) -> list[str]:
    """Every fenced block of that language in README.md, dedented (a block inside a list item is indented)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [textwrap.dedent(m.group(2)) for m in re.finditer(rf"^( *)```{language}\n(.*?)^\1```", text, re.S | re.M)]


@pytest.mark.parametrize(("language", "marker"), [("lua", "nvim-minimal"), ("elisp", "emacs-minimal")])
def test_the_readme_shows_the_docs_snippet_as_it_is(language: str, marker: str) -> None:
    snippet = docs_block(language, marker)
    assert snippet in readme_blocks(language), f"README.md has no {language} block identical to docs/editors.md's " \
        f"<!-- {marker} --> block:\n{snippet}"


def test_the_neovim_snippet_attaches_every_operator_yaml() -> None:
    """The README's Neovim snippet once left out derivatives.yaml: the minimal snippet names every kind."""
    snippet = docs_block("lua", "nvim-minimal")
    for kind in ('["native_functions.yaml"]', '["tags.yaml"]', '["derivatives.yaml"]', '".*_functions%.yaml"',
                 '".*/autograd/deprecated%.yaml"'):
        assert kind in snippet, kind
