"""Seeded random edits of a native_functions.yaml and its tags.yaml, for tests that hold a path that reuses earlier
work (the check's persistent memo, the language server's re-assembly) to the same answer as a run from scratch: edits of
an entry's tags, kernels and schema, edits of the file's structure (entries added, removed, duplicated, swapped,
renamed into another op's groups, delegates and view copies changed), of tags.yaml, and undos."""

from __future__ import annotations

import random


def entries_of(text: str) -> list[str]:
    """The file cut before each `- func:` line (the first piece: what comes before the first entry)."""
    pieces, current = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith("- func:") and current:
            pieces.append("".join(current))
            current = []
        current.append(line)
    pieces.append("".join(current))
    return pieces


# Edits of the file's structure, each done to an entry that has what it edits (else to the entry picked at random).
_TARGETED = {
    "overload": lambda e: e.startswith("- func:"),  # a new overload of the op, beside it (a new group member)
    "drop out=": lambda e: ".out(" in e.split("\n", 1)[0],  # an out= variant removed: its group loses it
    "delegate": lambda e: "structured_delegate:" in e,  # pointed elsewhere, or removed
    "unstructure": lambda e: "structured: True" in e,
    "autogen": lambda e: "autogen:" in e or "variants: function" in e,  # removed, or one added
    "view copy": lambda e: "view_copy" in e,  # a view's copy variant: its tag dropped, or the entry removed
    "move": lambda e: e.startswith("- func:"),  # renamed to another op's name: into that op's groups
}


def _targeted(rng: random.Random, what: str, pieces: list[str], i: int) -> int:
    fits = [k for k in range(1, len(pieces) - 1) if _TARGETED[what](pieces[k])]
    return rng.choice(fits) if fits else i


def _structure_edit(rng: random.Random, what: str, pieces: list[str], i: int) -> None:
    """One of _TARGETED's edits, in place (none where no entry has what it edits)."""
    entry = pieces[i]
    if not _TARGETED[what](entry):
        return
    first, _, rest = entry.partition("\n")
    name = first.removeprefix("- func:").strip().split("(", 1)[0]
    if what == "overload":
        base = name.split(".", 1)[0]
        pieces.insert(i + 1, entry.replace(name, f"{base}.opgen_overload{rng.randrange(4)}", 1))
    elif what == "drop out=":
        del pieces[i]
    elif what == "delegate":
        other = rng.choice([p.split("(", 1)[0].removeprefix("- func:").strip() for p in pieces[1:]])
        line = next(x for x in entry.splitlines() if "structured_delegate:" in x)
        pieces[i] = entry.replace(line + "\n", "" if rng.random() < 0.5 else f"  structured_delegate: {other}\n")
    elif what == "unstructure":
        pieces[i] = entry.replace("  structured: True\n", "", 1)
    elif what == "autogen":
        line = next((x for x in entry.splitlines() if x.startswith("  autogen:")), None)
        pieces[i] = entry.replace(line + "\n", "") if line else f"{first}\n  autogen: {name.split('.')[0]}.out\n{rest}"
    elif what == "view copy":
        pieces[i] = entry.replace("view_copy", "core") if rng.random() < 0.5 else ""
    elif what == "move":
        other = rng.choice([p.split("(", 1)[0].removeprefix("- func:").strip() for p in pieces[1:]])
        pieces[i] = entry.replace(name, other.split(".", 1)[0] + (f".{name.split('.', 1)[1]}" if "." in name else ""),
                                  1)


def edit(rng: random.Random, text: str, tags: str, history: list[tuple[str, str]]) -> tuple[str, str, str]:
    """One random edit of the pair (native_functions.yaml, tags.yaml): (what, new text, new tags)."""
    what = rng.choice(["tag", "bad tag", "kernel", "bad key", "schema", "bad schema", "remove", "duplicate", "swap",
                       "add", "tags.yaml", "undo", "nothing", *_TARGETED, *_TARGETED])
    pieces = entries_of(text)
    i = rng.randrange(1, len(pieces) - 1)
    if what in _TARGETED:
        i = _targeted(rng, what, pieces, i)
        _structure_edit(rng, what, pieces, i)
        return what, "".join(pieces), tags
    entry = pieces[i]
    lines = entry.splitlines(keepends=True)
    if what in ("tag", "bad tag"):
        tag = "pointwise" if what == "tag" else f"no_such_tag_{rng.randrange(100)}"
        at = next((k for k, line in enumerate(lines) if line.startswith("  tags:")), None)
        if at is None:
            lines.insert(1, f"  tags: {tag}\n")
        else:
            lines[at] = f"  tags: [{lines[at].split(':', 1)[1].strip().strip('[]')}, {tag}]\n".replace("[, ", "[")
    elif what in ("kernel", "bad key"):
        at = [k for k, line in enumerate(lines) if line.startswith("    ") and ":" in line and "," not in line]
        if at:
            k = rng.choice(at)
            key, _, kernel = lines[k].partition(":")
            lines[k] = (f"{key}: {kernel.strip()}_edited\n" if what == "kernel" else f"    NoSuchKey{rng.randrange(9)}:"
                        f"{kernel}")
    elif what in ("schema", "bad schema"):
        name, _, rest = lines[0].partition("(")
        lines[0] = f"{name}_renamed({rest}" if what == "schema" else lines[0].replace("Tensor", "Tensr", 1)
    if what == "remove":
        del pieces[i]
    elif what == "duplicate":
        pieces.insert(i, entry)
    elif what == "swap":
        pieces[i], pieces[i + 1] = pieces[i + 1], pieces[i]
    elif what == "add":
        pieces.insert(i, f"- func: opgen_added_{rng.randrange(1000)}(Tensor self) -> Tensor\n  variants: function\n\n")
    elif what == "tags.yaml":
        kept = [t for t in entries_of(tags.replace("- tag:", "- func:"))]
        victim = rng.randrange(1, len(kept)) if len(kept) > 2 else 0
        tags = "".join(kept[:victim] + kept[victim + 1:]).replace("- func:", "- tag:") if victim else tags
    elif what == "undo" and history:
        text, tags = rng.choice(history)
        return what, text, tags
    else:
        pieces[i] = "".join(lines)
    return what, "".join(pieces), tags
