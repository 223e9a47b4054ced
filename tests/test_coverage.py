"""docs/coverage.md is what the translator does today: regenerated here, compared cell by cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from gotmpl2jinja.batch import coverage

DOC = Path(__file__).resolve().parent.parent / "docs" / "coverage.md"


def _tables(text: str) -> str:
    """The tables and the reasons: everything after the header prose (which names the engines
    the doc was verified on; this test verifies on jinja2 alone, to stay light)."""
    return text[text.index("| construct |"):]


STALE = ("docs/coverage.md is stale: regenerate it with "
         "`gotmpl2jinja coverage -o docs/coverage.md --force`")


def _rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ")]


def test_the_coverage_tables_in_docs_are_the_translators_own() -> None:
    """Every table but the pipelines one (its 345 cells take the slow run): each of its rows
    is in docs/coverage.md as generated here."""
    quick = [title for title, _, _ in coverage.GROUPS
             if title != "Pipelines ending in each builtin"]
    cells = coverage.table(cases=5, engines=["jinja2"], groups=quick)
    doc = _rows(DOC.read_text(encoding="utf-8"))
    missing = [row for row in _rows(coverage.markdown(cells, "", ["jinja2"])) if row not in doc]
    assert not missing, STALE
    bugs = {key: cell for key, cell in cells.items() if cell.status not in ("exact", "refused")}
    assert not bugs, bugs


@pytest.mark.slow
def test_the_whole_coverage_doc_is_the_translators_own() -> None:
    cells = coverage.table(cases=5, engines=["jinja2"])
    assert _tables(coverage.markdown(cells, "", ["jinja2"])) == _tables(
        DOC.read_text(encoding="utf-8")), STALE
    bugs = {key: cell for key, cell in cells.items() if cell.status not in ("exact", "refused")}
    assert not bugs, bugs


def test_a_cell_is_verified_not_only_translated() -> None:
    # a translation that prints other bytes than Go is a divergence, not "exact": checked on a
    # cell whose Jinja is replaced by a wrong one
    template = coverage.cell_template(coverage.CONSTRUCTS[0], coverage.OPERANDS[0])
    assert template == "{{ range .Messages }}{{ .Content }}{{ end }}"
    assert coverage.check_cell(template, cases=5, engines=["jinja2"]).status == "exact"
    from gotmpl2jinja.verify.harness import verify_template

    wrong = "{% for m in messages %}{{ m.content|upper }}{% endfor %}"
    assert not verify_template(template, wrong, cases=5, exhaustive=1, engines=["jinja2"]).ok


def test_refusals_group_by_reason_with_the_go_type_left_out() -> None:
    assert coverage.reason_class("printf verb %s with a int operand: not supported") == (
        "printf verb %s with a T operand: not supported")
    assert coverage.reason_class("printing a value of Go type []*templateMessage is not "
                                 "supported") == "printing a value of Go type T is not supported"


def test_the_command_refuses_to_overwrite_before_any_work(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from gotmpl2jinja.cli.main import cli

    target = tmp_path / "coverage.md"
    target.write_text("mine\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["coverage", "-o", str(target)])
    assert result.exit_code == 1
    assert result.output.strip() == f"{target} already exists (use --force to overwrite it)"
    assert target.read_text(encoding="utf-8") == "mine\n"
