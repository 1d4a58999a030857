"""Log records of pygls at the level of what happened, for the client's output channel."""

from __future__ import annotations

import logging

# A client cancels a request the server has already answered: routine, not a warning.
_ROUTINE = ("Cancel notification for unknown message id",)


def lower_routine_records(record: logging.LogRecord) -> bool:
    """A logging filter: pygls's routine messages become DEBUG records (dropped unless DEBUG is on)."""
    if isinstance(record.msg, str) and record.msg.startswith(_ROUTINE):
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)
    return True


def install() -> None:
    logging.getLogger("pygls.protocol.json_rpc").addFilter(lower_routine_records)
