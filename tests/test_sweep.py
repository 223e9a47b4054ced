"""The corpus sweep finds every Go template, gives each one honest row, and writes a table a
Markdown renderer reads as one row per template."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import CORPUS, FIXTURES

from gotmpl2jinja.batch.sweep import (
    COLUMNS_AFTER,
    COLUMNS_BEFORE,
    DIVERGES,
    EQUIVALENT,
    INVALID,
    NOT_TRANSLATED,
    SweepRow,
    find_inputs,
    summary_sentence,
    sweep,
    to_markdown,
)
from gotmpl2jinja.cli.main import cli

CHATML = (CORPUS / "ollama" / "template" / "chatml.gotmpl").read_text(encoding="utf-8")
# Go syntax of a message (`%#v`) is not translated: the translator refuses it (a TranslationError
# with line:col).
# Intentionally invalid (role `robot`), see its SOURCE.md.
INVALID_MODELFILE = "corpus/ahnafnafee__modelfile-syntax/syntaxes/tests/messages.modelfile"
CHAR_OF_INT = '{{ range .Messages }}{{ printf "%#v" . }}{{ end }}'  # (refused)

MODELFILE = '''FROM {__FILE_LOCATION__}
TEMPLATE """{{ if .System }}S:{{ .System }}{{ end }}U:{{ .Prompt }}{__EOS_TOKEN__}A:{{ .Response }}"""
PARAMETER stop "{__EOS_TOKEN__}"
'''  # noqa: E501


def _cells(line: str) -> list[str]:
    """Split a table line on unescaped pipes, as GitHub's Markdown does."""
    assert line.startswith("| ") and line.endswith(" |"), line
    return re.split(r"(?<!\\)\|", line[2:-2])


def table_rows(markdown: str) -> list[list[str]]:
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith("| " + " | ".join(COLUMNS_BEFORE) + " | "))
    header = [cell.strip() for cell in _cells(lines[start])]
    assert header[-len(COLUMNS_AFTER):] == COLUMNS_AFTER
    assert lines[start + 1] == "|" + "---|" * len(header)
    rows = [_cells(line) for line in lines[start + 2:]]
    for row in rows:
        assert len(row) == len(header), row
    return [[cell.strip() for cell in row] for row in rows]


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "mini"
    (root / "a").mkdir(parents=True)
    (root / "a" / "chatml.gotmpl").write_text(CHATML, encoding="utf-8")
    (root / "a" / "copy.gotmpl").write_text(CHATML, encoding="utf-8")
    (root / "a" / "char.gotmpl").write_text(CHAR_OF_INT, encoding="utf-8")
    (root / "a" / "broken.gotmpl").write_text("{{ if .Messages }}", encoding="utf-8")
    (root / "b").mkdir()
    (root / "b" / "Modelfile").write_text(MODELFILE, encoding="utf-8")
    (root / "b" / "bad.modelfile").write_text('FROM x\nMESSAGE robot "hi"\n', encoding="utf-8")
    (root / "b" / "no-template.Modelfile").write_text("FROM x\n", encoding="utf-8")
    (root / "b" / "README.md").write_text("FROM the docs\n", encoding="utf-8")
    (root / "b" / "notes").write_text("just text\n", encoding="utf-8")
    return root


def test_inputs_are_gotmpl_files_and_modelfile_templates(corpus: Path) -> None:
    inputs = {i.label: i for i in find_inputs([corpus])}
    assert sorted(inputs) == [
        "mini/a/broken.gotmpl", "mini/a/char.gotmpl", "mini/a/chatml.gotmpl",
        "mini/a/copy.gotmpl", "mini/b/Modelfile#TEMPLATE", "mini/b/bad.modelfile",
    ]
    modelfile = inputs["mini/b/Modelfile#TEMPLATE"]
    assert modelfile.kind == "Modelfile"
    assert modelfile.source == "{{ if .System }}S:{{ .System }}{{ end }}U:{{ .Prompt }}</s>A:" \
                               "{{ .Response }}"
    bad = inputs["mini/b/bad.modelfile"]
    assert bad.source is None and bad.problem is not None
    assert bad.problem.startswith("mini/b/bad.modelfile:2:")


def test_each_template_gets_an_honest_row(corpus: Path) -> None:
    seen: list[str] = []
    rows = {r.template: r for r in sweep([corpus], cases=20, exhaustive=0,
                                         progress=lambda n, total, row: seen.append(row.template))}
    assert seen == sorted(rows)
    chatml = rows["mini/a/chatml.gotmpl"]
    assert chatml.status == EQUIVALENT and chatml.path == "messages"
    assert chatml.cases == 20 + 14 and chatml.engines and not chatml.diverging
    copy = rows["mini/a/copy.gotmpl"]
    assert copy.same_as == "mini/a/chatml.gotmpl" and copy.cases == chatml.cases
    refused = rows["mini/a/char.gotmpl"]
    assert refused.status == NOT_TRANSLATED
    assert re.match(r"mini/a/char\.gotmpl:1:\d+: printf verb %v with a \*templateMessage "
                    "operand: Go syntax", refused.reason)
    assert refused.cases == 0
    assert rows["mini/a/broken.gotmpl"].status == INVALID
    legacy = rows["mini/b/Modelfile#TEMPLATE"]
    assert legacy.path == "legacy" and legacy.status == EQUIVALENT
    assert rows["mini/b/bad.modelfile"].status == INVALID


def test_table_cells_survive_pipes_tags_and_newlines() -> None:
    row = SweepRow(
        template="x|y.gotmpl", kind="gotmpl", path="messages", status=DIVERGES, cases=3,
        engines=["jinja2", "hfjinja"], diverging=["hfjinja"],
        counterexample={"engine": "hfjinja", "conversation": {"messages": [
            {"role": "user", "content": "a|b <think>`\n"}]},
            "diff": "first difference at offset 3 (line 1, column 4)\ngo: …"},
    )
    markdown = to_markdown([row], command="gotmpl2jinja sweep x", cases=3, exhaustive=None,
                           seed=0)
    (cells,) = table_rows(markdown)
    assert cells[0] == "x\\|y.gotmpl"
    assert cells[5:7] == ["=", "**diverges**"]  # one column per engine
    # JSON escapes the newline; the pipe is escaped for the table, the tag kept in code.
    assert '"a\\|b <think>`\\n"' in cells[7] and cells[7].startswith("hfjinja: ``")
    assert "offset 3" in cells[7]
    assert "`gotmpl2jinja sweep x`" in markdown


def _expected_labels() -> set[str]:
    """Every Go template of fixtures/corpus and fixtures/seeds, enumerated independently of the
    sweep (same rule as the parser's corpus test), plus the corpus's one invalid Modelfile."""
    gotmpl = [*FIXTURES.glob("corpus/**/*.gotmpl"), *FIXTURES.glob("seeds/*.gotmpl")]
    # (Ollama's testdata has folders named *.gotmpl: not templates.)
    labels = {p.relative_to(FIXTURES).as_posix() for p in gotmpl if p.is_file()}
    for path in CORPUS.rglob("*"):
        name = path.name
        if path.is_file() and (name == "Modelfile" or name.lower().endswith(".modelfile")):
            text = path.read_text(encoding="utf-8")
            label = path.relative_to(FIXTURES).as_posix()
            if label == INVALID_MODELFILE:
                labels.add(label)
            elif re.search(r"^\s*template\s", text, re.IGNORECASE | re.MULTILINE):
                labels.add(label + "#TEMPLATE")
    return labels


@pytest.mark.slow
def test_sweep_command_lists_every_corpus_template(tmp_path: Path) -> None:
    out = tmp_path / "sweep.md"
    result = CliRunner().invoke(cli, [
        "sweep", str(FIXTURES / "corpus"), str(FIXTURES / "seeds"), "-o", str(out),
        "--cases", "10", "--exhaustive", "0", "--engines", "jinja2,minijinja",
    ])
    assert result.exit_code == 0, result.output
    markdown = out.read_text(encoding="utf-8")
    assert markdown.startswith("# Corpus sweep\n\nGenerated by `gotmpl2jinja sweep ")
    assert "--cases 10 --exhaustive 0" in markdown
    rows = table_rows(markdown)
    labels = [row[0].replace("\\|", "|") for row in rows]
    assert len(labels) == len(set(labels))
    assert set(labels) == _expected_labels()
    assert len(labels) >= 197
    for row in rows:
        status = row[2]
        assert status == "translated" or status.startswith(
            ("translated (same source as", "not translated: ", "invalid input: ", "error: ")), row
        diverges = "**diverges**" in row[5:7]  # the jinja2 and minijinja columns
        if status.startswith("translated"):
            assert int(row[3]) == 10 + 14 or diverges, row  # all cases, or stopped
            assert "—" not in row[5:7] and 0 <= int(row[4]) <= int(row[3])
        if diverges:
            assert row[7] != "—", row  # a divergence always shows its counterexample
    assert f"**{len(rows)} templates:**" in markdown
    # Progress went to stderr, one line per template, then the totals as a sentence.
    assert result.stderr.count("\n") >= len(rows)
    assert result.stderr.splitlines()[-1] == f"{summary_sentence(rows_of(rows))} Wrote {out}."

    as_json = CliRunner().invoke(cli, ["sweep", str(FIXTURES / "seeds"), "--cases", "5",
                                       "--exhaustive", "0", "--json"])
    assert as_json.exit_code == 0, as_json.output
    (seed_row,) = json.loads(as_json.stdout)
    assert seed_row["template"] == "seeds/002_qwen-style.gotmpl"
    assert seed_row["status"] in (EQUIVALENT, DIVERGES)


def rows_of(cells: list[list[str]]) -> list[SweepRow]:
    """Rows with just what a table line shows: status, cases, refusals, "same source as"."""
    def status(row: list[str]) -> str:
        if row[2].startswith("translated"):
            return DIVERGES if "**diverges**" in row[5:-1] else EQUIVALENT
        return row[2].split(":", 1)[0]

    def number(cell: str) -> int:
        return 0 if cell == "—" else int(cell)
    return [SweepRow(template=c[0], kind="", status=status(c), cases=number(c[3]),
                     refused=number(c[4]), same_as="x" if "(same source as" in c[2] else None)
            for c in cells]


def test_summary_is_a_sentence() -> None:
    rows = [SweepRow(template=str(i), kind="gotmpl", status=s)
            for i, s in enumerate([EQUIVALENT, EQUIVALENT, INVALID, EQUIVALENT])]
    assert summary_sentence(rows) == "4 templates: 3 equivalent, 1 invalid input."
    assert summary_sentence(rows[:1]) == "1 template: 1 equivalent."
    assert summary_sentence([]) == "0 templates: none found."
    counted = [SweepRow(template="a", kind="gotmpl", status=EQUIVALENT, cases=10, refused=4),
               SweepRow(template="b", kind="gotmpl", status=EQUIVALENT, cases=10, refused=4,
                        same_as="a")]
    assert summary_sentence(counted) == (
        "2 templates: 2 equivalent; 10 cases checked, 4 of them refused by Ollama for a "
        "capability (rendered as if the option were absent).")


# A Modelfile with SYSTEM and MESSAGE lines: Ollama's server puts both before the conversation.
RULE_MODELFILE = '''FROM {__FILE_LOCATION__}
SYSTEM """Be brief."""
MESSAGE user hello
MESSAGE assistant hi
TEMPLATE """{{ range .Messages }}<{{ .Role }}>{{ .Content }}
{{ end }}<assistant>"""
'''
SAME_TEMPLATE = "{{ range .Messages }}<{{ .Role }}>{{ .Content }}\n{{ end }}<assistant>"
UNTRANSLATABLE_MODELFILE = '''# a comment line
FROM x
TEMPLATE """{{ range .Messages }}
{{ printf "%#v" . }}{{ end }}"""
'''


@pytest.fixture()
def modelfiles(tmp_path: Path) -> Path:
    root = tmp_path / "mf"
    root.mkdir()
    (root / "rule.Modelfile").write_text(RULE_MODELFILE, encoding="utf-8")
    (root / "same.gotmpl").write_text(SAME_TEMPLATE, encoding="utf-8")
    (root / "norule.Modelfile").write_text(f'FROM x\nTEMPLATE """{SAME_TEMPLATE}"""\n',
                                           encoding="utf-8")
    (root / "char.Modelfile").write_text(UNTRANSLATABLE_MODELFILE, encoding="utf-8")
    return root


def test_modelfile_rows_are_verified_with_their_system_and_messages(modelfiles: Path) -> None:
    inputs = {i.label: i for i in find_inputs([modelfiles])}
    rule = inputs["mf/rule.Modelfile#TEMPLATE"]
    assert rule.source == SAME_TEMPLATE
    assert rule.modelfile is not None and rule.modelfile.system == "Be brief."
    assert rule.modelfile.messages == [{"role": "user", "content": "hello"},
                                       {"role": "assistant", "content": "hi"}]
    rows = {r.template: r for r in sweep([modelfiles], cases=20, exhaustive=0,
                                         engines=["jinja2", "minijinja"])}
    served = rows["mf/rule.Modelfile#TEMPLATE"]
    assert served.status == EQUIVALENT, served
    bare = rows["mf/same.gotmpl"]
    assert bare.status == EQUIVALENT
    # Same template, different rule: two verdicts, not one reused; without a rule a Modelfile
    # is checked exactly as its bare template, so that verdict is reused.
    assert served.same_as is None
    assert rows["mf/norule.Modelfile#TEMPLATE"].same_as is None
    assert bare.same_as == "mf/norule.Modelfile#TEMPLATE"


def test_modelfile_rule_reaches_both_sides(modelfiles: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    """The Go side renders with the rule: the empty conversation already shows SYSTEM and the
    MESSAGE lines (checked on Go's own output, through the counterexample of a Jinja that
    drops the rule)."""
    import gotmpl2jinja.emit.preamble as inputs

    monkeypatch.setattr(inputs, "modelfile_preamble", lambda system, messages: "")
    rows = {r.template: r for r in sweep([modelfiles], cases=20, exhaustive=0,
                                         engines=["jinja2"])}
    served = rows["mf/rule.Modelfile#TEMPLATE"]
    assert served.status == DIVERGES and served.counterexample is not None
    assert served.counterexample["conversation"] == {"messages": []}
    assert served.counterexample["go_output"] == (
        "<system>Be brief.\n<user>hello\n<assistant>hi\n<assistant>")
    assert served.counterexample["jinja_output"] == "<assistant>"


def test_modelfile_row_positions_point_into_the_modelfile(modelfiles: Path) -> None:
    rows = {r.template: r for r in sweep([modelfiles], cases=5, exhaustive=0,
                                         engines=["jinja2"])}
    refused = rows["mf/char.Modelfile#TEMPLATE"]
    assert refused.status == NOT_TRANSLATED
    # `printf` is on the TEMPLATE value's line 2, column 4: the Modelfile's line 4, column 4.
    assert refused.reason.startswith("mf/char.Modelfile:4:4: printf verb %v with a "
                                     "*templateMessage operand: Go syntax"), \
        refused.reason


def test_files_given_by_name_keep_their_paths_apart() -> None:
    """Two `template.gotmpl` given by name are two rows, each labelled by its path as given
    (they were both `template.gotmpl`)."""
    entries = FIXTURES / "corpus" / "huggingface__huggingface.js" / "entries"
    first, second = (entries / name / "template.gotmpl"
                     for name in ("068__library_phi3_14b", "082__library_qwen3_0.6b"))
    labels = [i.label for i in find_inputs([first, second])]
    assert labels == sorted([first.as_posix(), second.as_posix()])
    # a folder's files still read from the folder's own name down
    assert all(i.label.startswith("068__library_phi3_14b/")
               for i in find_inputs([first.parent]))
