"""Every Python snippet in the README runs."""

import pathlib
import re
import textwrap

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = [textwrap.dedent(b) for b in
          re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)]


def test_readme_has_snippets():
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_snippet_runs(index):
    exec(compile(BLOCKS[index], f"README.md[python block {index}]", "exec"), {"__name__": "__readme__"})
