"""torchgen's rules for what a well-formed schema may say about mutation and returns.

Each rule yields a Problem naming the part of the schema to blame, so the
caller can place the diagnostic on that argument or return.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..frozen import record
from .schema import TENSOR, FunctionSchema, SchemaKind, SchemaKindError

# Where in a schema a problem is: ("name",), ("returns",), ("arg", i) or ("return", i),
# with i an index into arguments.flat_all / returns.
Where = tuple[str] | tuple[str, int]


@record
class Problem:
    message: str
    where: Where


def _arg_index(schema: FunctionSchema, name: str) -> int:
    return next((i for i, a in enumerate(schema.arguments.flat_all) if a.name == name), 0)


def check_schema(schema: FunctionSchema) -> tuple[Problem, ...]:
    if _plainly_fine(schema):
        return ()
    return tuple(_problems(schema))


def _plainly_fine(schema: FunctionSchema) -> bool:
    """A cheap test that no rule below can fire: most schemas mutate nothing, alias no return and
    have no out arguments, tensor options, trailing '_' or 'functional' overload."""
    args = schema.arguments
    return (not args.out and args.tensor_options is None and not schema.name.name.inplace
            and "functional" not in schema.name.overload_name
            and all(r.annotation is None for r in schema.returns)
            and all(a.annotation is None for a in args.post_self_positional))


def _problems(schema: FunctionSchema) -> Iterator[Problem]:
    args = schema.arguments
    returns = schema.returns
    # Annotations are memoised per text: an identical one is the usual case, asked before the record's own ==.
    for i, (arg, ret) in enumerate(zip(args.out, returns)):
        if arg.annotation is not ret.annotation and arg.annotation != ret.annotation:
            yield Problem(f"out argument '{arg.name}' and return {i + 1} must carry the same alias annotation "
                          f"(the i-th out argument is the i-th return); got {arg.annotation or 'none'} and "
                          f"{ret.annotation or 'none'}", ("return", i))
    for a in args.post_self_positional_mutable:
        if any(a.annotation is r.annotation or a.annotation == r.annotation for r in returns):
            yield Problem(f"mutable positional argument '{a.name}' must not be returned", ("arg", _arg_index(schema, a.name)))
    mutable_returns = [r for r in returns if r.is_write]
    if mutable_returns and len(mutable_returns) != len(returns):
        yield Problem("returns must be either all mutable (aliased, '!') or all immutable", ("returns",))
    out_and_self = list(args.out) + [a for a in args.flat_positional if a.name == "self"] if mutable_returns else []
    for ret in mutable_returns:
        if not any(ret.annotation is a.annotation or ret.annotation == a.annotation for a in out_and_self):
            yield Problem("every mutable return must alias a keyword-only out argument or self; "
                          "did you forget to put the out argument after '*'?", ("return", returns.index(ret)))
    if args.out:
        if any(a.type != TENSOR for a in args.out):
            if returns:
                yield Problem("an out= op whose out arguments are not all plain Tensors must return nothing: '-> ()'",
                              ("returns",))
        else:
            non_scratch = sum(1 for a in args.out if not a.name.startswith("_scratch_"))
            if non_scratch != len(returns):
                yield Problem(f"an out= op must return as many values as it has out arguments ({non_scratch}), "
                              f"or nothing; it returns {len(returns)}", ("returns",))
    if schema.name.name.inplace:
        if args.out:
            yield Problem("an in-place op (name ending in '_') cannot also have out arguments", ("name",))
        self_a = args.self_arg
        if not (self_a and self_a.argument.is_write):
            yield Problem(f"in-place op '{schema.name}' needs a mutable self argument, e.g. 'Tensor(a!) self'", ("name",))
        elif self_a.argument.type == TENSOR:
            if not (len(returns) == 1 and returns[0].annotation == self_a.argument.annotation):
                yield Problem(f"in-place op '{schema.name}' with a Tensor self must return self, "
                              f"e.g. '-> Tensor({self_a.argument.annotation})'", ("returns",))
        elif returns:
            yield Problem(f"in-place op '{schema.name}' with a non-Tensor self must return nothing: '-> ()'", ("returns",))
    try:
        kind = schema.kind()
    except SchemaKindError:
        return
    if args.tensor_options is not None and kind != SchemaKind.functional:
        yield Problem("tensor options (dtype, layout, device, pin_memory) are allowed only on functional "
                      "(factory) functions", ("arg", _arg_index(schema, "dtype")))
    if schema.is_functional_fn() and kind != SchemaKind.functional:
        yield Problem("the overload name contains 'functional', which is reserved for functional variants", ("name",))
