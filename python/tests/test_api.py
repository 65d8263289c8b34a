"""The installed package is the documented one: every public name exists, is in the type stubs
with the same parameters, and has a docstring; py.typed ships."""
import ast
import inspect
from pathlib import Path

import servesim


def stub_functions():
    stub = Path(servesim.__file__).with_name("__init__.pyi")
    tree = ast.parse(stub.read_text())
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def test_public_names_are_stubbed_and_documented():
    stubs = stub_functions()
    assert (Path(servesim.__file__).parent / "py.typed").is_file()
    for name in servesim.__all__:
        if name == "__version__":
            continue
        obj = getattr(servesim, name)
        assert inspect.getdoc(obj), f"{name} has no docstring"
        assert name in stubs, f"{name} is not in __init__.pyi"
        if inspect.isfunction(obj):
            runtime = [p.name for p in inspect.signature(obj).parameters.values()
                       if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            args = stubs[name].args
            stubbed = [a.arg for a in args.posonlyargs + args.args]
            assert stubbed == runtime, f"{name}: stub {stubbed} vs runtime {runtime}"


def test_version_is_the_cli_version():
    assert servesim.cli("--version").strip() == f"servesim {servesim.__version__}"
