"""The JSON-RPC 2.0 envelope of a message, checked before pygls sees it (issue 27): pure, nothing of pygls.

pygls trusts the envelope: an id that is an array or object reaches a dict as a key (TypeError, answered
with a Python traceback), a method that is not a string is concatenated to one, a "jsonrpc" other than
"2.0" is dropped without an answer. Here each message gets one verdict:
- `Deliver`: a well-formed request, notification or response, for pygls;
- `Answer`: the error each request in it is answered with (its id, or null when it has none usable);
- `Drop`: nothing is due (a notification or response that cannot be used), with why, for the log.

What is well-formed (JSON-RPC 2.0 and the LSP base protocol): an object with "jsonrpc": "2.0"; a request
has a string "method" and an "id" that is a string or an integer (LSP: `integer | string`); a
notification has a string "method" and no "id"; a response has an "id" and a "result" or an "error".
Params of the wrong shape are the method's InvalidParams (pygls structures them). A request for a method the server does not have is
MethodNotFound whatever its params. LSP has no batches: each request in one is answered InvalidRequest.
"""

from __future__ import annotations

from collections.abc import Callable

from ..frozen import record

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
CANCEL_REQUEST = "$/cancelRequest"

Id = int | str | None


@record
class Deliver:
    """A well-formed message; `is_request` when an answer is due."""

    is_request: bool


@record
class Answer:
    """Errors to send: (id, code, message) each."""

    errors: tuple[tuple[Id, int, str], ...]


@record
class Drop:
    why: str


Verdict = Deliver | Answer | Drop


def valid_id(value: object) -> bool:
    """Whether `value` can be a request's id: a string or an integer (not a boolean)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def usable_id(message: object) -> Id:
    """The id a message's error is answered with: its own when valid, else null (JSON-RPC 2.0, section 5)."""
    value = message.get("id") if isinstance(message, dict) else None
    return value if valid_id(value) else None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check(message: object, has_method: Callable[[str], bool]) -> Verdict:
    """The verdict on one parsed message; `has_method(name)`: whether the server handles that method."""
    if isinstance(message, list):
        return _batch(message)
    if not isinstance(message, dict):
        return Answer(((None, INVALID_REQUEST, "a message must be a JSON object"),))
    if "method" not in message:
        return _response(message)
    method = message["method"]
    is_request = "id" in message
    if is_request and not valid_id(message["id"]):
        return Answer(((None, INVALID_REQUEST, f"a request id must be a string or an integer, not "
                                               f"{_short(message['id'])}"),))
    problem = _envelope_problem(message)
    if problem is None and not isinstance(method, str):
        problem = f"a method must be a string, not {_short(method)}"
    if problem is not None:
        return Answer(((message["id"], INVALID_REQUEST, problem),)) if is_request else Drop(problem)
    if not has_method(method):
        if is_request:
            return Answer(((message["id"], METHOD_NOT_FOUND, f"no method {_short(method)}"),))
        return Drop(f"a notification of no method the server has ({_short(method)})")
    if method == CANCEL_REQUEST:
        params = message.get("params")
        target = params.get("id") if isinstance(params, dict) else None
        if not valid_id(target):
            why = f"$/cancelRequest needs the id of a request (a string or an integer), not {_short(target)}"
            return Answer(((message["id"], INVALID_PARAMS, why),)) if is_request else Drop(why)
    return Deliver(is_request)


def _envelope_problem(message: dict) -> str | None:
    if message.get("jsonrpc") != "2.0":
        return f"not a JSON-RPC 2.0 message (\"jsonrpc\": {_short(message.get('jsonrpc'))})"
    return None  # params of the wrong shape: the method's own check answers InvalidParams


def _response(message: dict) -> Verdict:
    if ("result" in message or "error" in message) and "id" in message:
        if message.get("jsonrpc") != "2.0":
            return Drop("a response that is not JSON-RPC 2.0")
        if message["id"] is not None and not valid_id(message["id"]):
            return Drop(f"a response to no request the server made (id {_short(message['id'])})")
        return Deliver(False)
    if "id" in message:
        return Answer(((usable_id(message), INVALID_REQUEST, "a request needs a method"),))
    return Drop("a message with neither method nor id")


def _batch(messages: list) -> Verdict:
    errors = tuple((m["id"], INVALID_REQUEST, "LSP has no batches: send each request alone")
                   for m in messages if isinstance(m, dict) and "method" in m and valid_id(m.get("id")))
    return Answer(errors or ((None, INVALID_REQUEST, "LSP has no batches: send each request alone"),))
