"""Safety of compression: what is protected comes out byte for byte and in
order, at every level.

- the recorded corpus (tests/data), against the engine's own mask;
- hand-written must-survive strings in prose, independent of the mask;
- random documents (hypothesis) built from the protect/ self-test examples
  and unprotected prose;
- every level applies everything of the level below, in order.
"""

import functools
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core.profile import load_profile
from engine.text.pipeline import compress, split_line_endings
from testdata import corpus_files

REPO = Path(__file__).resolve().parent.parent
LEVELS = ("off", "light", "standard", "aggressive")


@functools.lru_cache(maxsize=None)
def profile(level):
    # The built-in profile by name: no $ENGINE_PROFILE, no .engine/ of the working directory.
    return load_profile("default", level)


def in_order(needles, haystack):
    """The needles that are not found in haystack in this order (str.find from
    the end of the previous find)."""
    missing, pos = [], 0
    for n in needles:
        i = haystack.find(n, pos)
        if i < 0:
            missing.append(n)
            continue
        pos = i + len(n)
    return missing


def test_in_order_helper():
    assert in_order(["a", "b"], "xaxb") == []
    assert in_order(["b", "a"], "ab") == ["a"]
    assert in_order(["never"], "nvr") == ["never"]


# --------------------------------------------------------------------------
# 1. The recorded corpus: every span of the engine's own mask survives.
# --------------------------------------------------------------------------

MERMAID = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*mermaid\b")


def lost_spans(prof, text, run=compress):
    """Protected spans of text (by the profile's mask) not found, in order, in
    the output; spans a transform replaced by design (mermaid fences, and the
    target of a link whose text is that target, reported in
    r.replaced_by_design) are excused, and only those: a link target only
    where its name is still in the output, as the link's text."""
    work, _ = split_line_endings(text)
    spans = [(s.category, work[s.start:s.end]) for s in prof.protector.mask(work).spans]
    r = run(prof, text)
    assert spans == r.protected, "r.protected differs from the mask of the input"
    out, _ = split_line_endings(r.text)
    budget = {}
    for category, _transform in r.replaced_by_design:
        budget[category] = budget.get(category, 0) + 1
    lost, pos = [], 0
    for category, span in spans:
        i = out.find(span, pos)
        if i >= 0:
            pos = i + len(span)
            continue
        if category == "fenced_code" and MERMAID.match(span) and budget.get(category, 0) > 0:
            budget[category] -= 1
            continue
        if category == "link_targets" and budget.get(category, 0) > 0 and span[1:-1].removeprefix("./") in out:
            budget[category] -= 1
            continue
        lost.append((category, span))
    return lost, r


CORPUS_FILES = corpus_files()


@pytest.mark.parametrize("level", LEVELS)
def test_corpus_protected_spans_survive_in_order(level):
    prof = profile(level)
    report, total = [], 0
    for path in CORPUS_FILES:
        text = path.read_bytes().decode("utf-8")
        lost, r = lost_spans(prof, text)
        total += len(r.protected)
        for category, span in lost:
            report.append(f"{path.name}: {category}: {span[:80]!r}")
        if level == "off":
            assert r.text == text, f"{path.name}: level off changed the text"
    assert total > 1000  # the mask found something to protect
    assert not report, f"{len(report)} protected span(s) lost at {level}:\n" + "\n".join(report)


@pytest.mark.parametrize("level", LEVELS[1:])
def test_only_mermaid_flowcharts_are_replaced_by_design(level):
    text = (
        "Intro.\n\n```mermaid\ngraph TD\n  A --> B\n```\n\n"
        "~~~mermaid\nsequenceDiagram\n  A->>B: hi\n~~~\n\n"
        "```python\n# not a diagram: the mermaid word  in code\nx =   1\n```\n"
    )
    lost, r = lost_spans(profile(level), text)
    assert lost == []
    # the flowchart becomes its edges; the sequence diagram, which the kind
    # does not read, stays as written
    assert [c for c, _ in r.replaced_by_design] == ["fenced_code"]
    assert "[graph TD: A -> B]" in r.text and "```mermaid" not in r.text
    assert "~~~mermaid\nsequenceDiagram\n  A->>B: hi\n~~~\n" in r.text
    assert "```python\n# not a diagram: the mermaid word  in code\nx =   1\n```\n" in r.text


@pytest.mark.parametrize("level", LEVELS[1:])
def test_a_link_that_repeats_its_target_loses_only_the_target(level):
    text = "See [docs/AGENTS.md](docs/AGENTS.md) and [`a.md`](./a.md), not [the guide](docs/guide.md).\n"
    lost, r = lost_spans(profile(level), text)
    assert lost == []
    assert [c for c, _ in r.replaced_by_design] == ["link_targets", "link_targets"]
    assert "See docs/AGENTS.md and `a.md`" in r.text and "guide](docs/guide.md)" in r.text


def test_a_lost_span_is_noticed():
    """The corpus check is not vacuous: a span a transform dropped is reported."""
    prof = profile("standard")
    text = "Never edit `config.yaml` by hand.\n"
    assert lost_spans(prof, text)[0] == []

    def stripping(p, t):
        r = compress(p, t)
        r.text = r.text.replace("`", "")
        return r

    lost, _ = lost_spans(prof, text, run=stripping)
    assert lost == [("inline_code", "`config.yaml`")]


# --------------------------------------------------------------------------
# 2. Must-survive strings in prose, written by hand (independent of the mask).
# --------------------------------------------------------------------------

GITHUB_TOKEN = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
assert len(GITHUB_TOKEN) == 40

SENTENCES = [
    ("You shouldn't deploy the application on a Friday.", ["shouldn't deploy"]),
    ("We don\u2019t store the password in the repository.", ["don\u2019t store"]),
    ("The job won't retry, and you can't cancel it from the dashboard.", ["won't retry", "can't cancel"]),
    ("I dont want the configuration to change, and it isn't the default.", ["dont want", "isn't"]),
    ("It doesn't matter which environment is used; we cannot skip the review.", ["doesn't matter", "cannot skip"]),
    ("Never run the migration without a backup of the database.", ["Never run", "without"]),
    ("You must not push to the main branch and you do not merge your own pull request.",
     ["must not push", "do not merge"]),
    ("Run `kubectl delete pod api-0` only in the staging environment.", ["`kubectl delete pod api-0`", "only"]),
    ("Set `configuration` and ``a ` b`` in the file.", ["`configuration`", "``a ` b``"]),
    # a code span holds runs of backticks of another length than its own ("`a``b`" is one span)
    ("Write `the a``b` and ``a```the``` b`` in the configuration.", ["`the a``b`", "``a```the``` b``"]),
    ("Edit ~/.claude/rules/*.md and ./scripts/deploy.sh, never /etc/nginx/nginx.conf directly.",
     ["~/.claude/rules/*.md", "./scripts/deploy.sh", "never", "/etc/nginx/nginx.conf"]),
    ("Lint src/**/*.ts and all *.md files in ../shared/documentation before the release.",
     ["src/**/*.ts", "*.md", "../shared/documentation"]),
    ("Read https://example.com/authentication/configuration?environment=production#section for the details.",
     ["https://example.com/authentication/configuration?environment=production#section"]),
    ("The server listens on port 8000 and alerts at 80% of the 512MiB memory limit.", ["8000", "80%", "512MiB"]),
    ("Pin the dependency to v1.2.3 and retry after 30s, at most 5 times, within 24h.",
     ["v1.2.3", "30s", "at most 5", "24h"]),
    ("A timeout of 1,000 ms with 3-5 retries and Python 3.11 is the minimum.", ["1,000 ms", "3-5", "3.11"]),
    ("Set MAX_RETRY_COUNT and DATABASE_URL in the environment before you start the application.",
     ["MAX_RETRY_COUNT", "DATABASE_URL"]),
    ("Use $HOME and ${API_TOKEN} in the configuration instead of literal values.",
     ["$HOME", "${API_TOKEN}", "instead of"]),
    ("Pass --environment=production and --dry-run to the deployment script, and never --force.",
     ["--environment=production", "--dry-run", "never --force"]),
    ("Run git push --force-with-lease only after a review of the repository.", ["git push --force-with-lease", "only"]),
    ("Send the report to ops-team@example.com and to security.lead@example.org.",
     ["ops-team@example.com", "security.lead@example.org"]),
    (f"Revoke the token {GITHUB_TOKEN} if it shows up in the logs.", [GITHUB_TOKEN]),
    ("An AWS key looks like AKIAIOSFODNN7EXAMPLE and an OpenAI key like sk-proj-abc123def456ghi789jkl012.",
     ["AKIAIOSFODNN7EXAMPLE", "sk-proj-abc123def456ghi789jkl012"]),
    ("Call parse_config_file() from __init__.py and keep the __dunder__ names of the module.",
     ["parse_config_file()", "__init__.py", "__dunder__"]),
    ("Prefer camelCaseNames in TypeScript, snake_case_names in Python, and os.path.join for the paths.",
     ["camelCaseNames", "TypeScript", "snake_case_names", "os.path.join"]),
    ("Check commit 24dcd50c0568f0fc9e9211213a4fd2d9eb15c4e0 before the release.",
     ["24dcd50c0568f0fc9e9211213a4fd2d9eb15c4e0"]),
    ("Install @types/node as a development dependency.", ["@types/node"]),
    ("Keep the firewall on at all times.", ["firewall on", "at all times"]),
    ("Use at least 3 replicas and up to 5 workers, from 1 to 3 per zone.", ["at least 3", "up to 5", "from 1 to 3"]),
    ("The product 2 * 3 * 4 and the term a*b*c keep their stars.", ["2 * 3 * 4", "a*b*c"]),
    ("Always log in first, then opt in to the beta and turn on the feature flag.",
     ["Always", "log in", "opt in", "turn on"]),
]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("layout", ["paragraphs", "bullets", "crlf"])
def test_hand_written_strings_survive(level, layout):
    if layout == "paragraphs":
        doc = "\n\n".join(s for s, _ in SENTENCES) + "\n"
    else:
        doc = "# Rules\n\n" + "".join(f"- {s}\n" for s, _ in SENTENCES)
    if layout == "crlf":
        doc = doc.replace("\n", "\r\n")
    out = compress(profile(level), doc).text
    needles = [n for _, ns in SENTENCES for n in ns]
    missing = in_order(needles, out)
    assert not missing, f"lost at {level} ({layout}): {missing}\n--- output:\n{out}"
    if layout == "crlf":
        assert out.count("\n") == out.count("\r\n")


def test_hand_written_sentences_are_really_compressed():
    """The strings survive although the prose around them is rewritten: the
    levels above light do change these sentences."""
    doc = "\n\n".join(s for s, _ in SENTENCES) + "\n"
    for level in ("standard", "aggressive"):
        out = compress(profile(level), doc).text
        assert len(out) < len(doc) * 0.97, level


# --------------------------------------------------------------------------
# 3. Hypothesis: random documents of protected pieces and unprotected prose.
# --------------------------------------------------------------------------


def _examples():
    by_category = {}
    for path in sorted((REPO / "protect").glob("*.yaml")):
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        by_category[data["name"]] = (data.get("stage", "token"), list(data.get("examples", {}).get("match", [])))
    return by_category


EXAMPLES = _examples()
# Opaque regions only behave as opaque at the start of a line (fences, indented
# code, reference definitions) or of the file (frontmatter).
LINE_START = {"fenced_code", "indented_code", "link_targets"}
FRONTMATTER = [e for e in EXAMPLES.get("frontmatter", ("", []))[1]]
BLOCKS = sorted({e for c, (_, ex) in EXAMPLES.items() if c in LINE_START for e in ex})
INLINE = sorted({e for c, (_, ex) in EXAMPLES.items() if c not in LINE_START | {"frontmatter"} for e in ex})

PROSE = [
    # fillers and particles
    "the", "a", "an", "is", "are", "be", "in", "on", "to", "of", "for", "with", "at", "that", "which",
    # abbreviable and long words
    "configuration", "production", "environment", "authentication", "database", "repository",
    "directory", "application", "kubernetes", "information", "performance", "understand", "carefully",
    # hedges and phrases
    "very", "just", "really", "it", "this", "please", "usually", "in order to", "make sure", "as well as",
    # plain words
    "rule", "file", "Use", "keep", "run", "test",
    # markdown marks
    "**", "##", "#", "*", "_", "-", ":", ",", ".",
]


def test_examples_were_loaded():
    assert len(EXAMPLES) >= 15
    assert FRONTMATTER and BLOCKS and len(INLINE) > 40
    assert any(b.startswith("```") for b in BLOCKS) and any(b.startswith("~~~") for b in BLOCKS)


@st.composite
def documents(draw):
    """(text, protected pieces in order)."""
    text, pieces = "", []
    fm = draw(st.none() | st.sampled_from(FRONTMATTER))
    if fm is not None:
        text = fm if fm.endswith("\n") else fm + "\n"
        pieces.append(fm)
    items = draw(st.lists(
        st.one_of(
            st.tuples(st.just("inline"), st.sampled_from(INLINE)),
            st.tuples(st.just("block"), st.sampled_from(BLOCKS)),
            st.tuples(st.just("prose"), st.sampled_from(PROSE)),
            st.tuples(st.just("prose"), st.sampled_from(PROSE)),
        ),
        max_size=40,
    ))
    for kind, s in items:
        if kind == "block":
            text = text.rstrip(" ")
            if text:
                text += "\n\n" if not text.endswith("\n") else "\n"
            text += s if s.endswith("\n") else s + "\n"
            text += "\n"
        else:
            if text and not text.endswith("\n"):
                text += draw(st.sampled_from([" ", " ", " ", "  ", "\n", "\n\n"]))
            text += s
        if kind != "prose":
            pieces.append(s)
    return text, pieces


@pytest.mark.slow
@pytest.mark.parametrize("level", LEVELS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents())
def test_random_documents_keep_protected_pieces(level, doc):
    text, pieces = doc
    out = compress(profile(level), text).text
    missing = in_order(pieces, out)
    assert not missing, f"level {level} lost {missing}\n--- input:\n{text!r}\n--- output:\n{out!r}"


# --------------------------------------------------------------------------
# 4. Level N applies everything of the levels below, in order.
# --------------------------------------------------------------------------


def _own_transforms(level):
    data = yaml.safe_load((REPO / "pipelines" / "levels" / f"{level}.yaml").read_text(encoding="utf-8"))
    return data, [t["name"] for t in data.get("transforms", [])]


def test_each_level_extends_the_one_below():
    for lower, higher in zip(LEVELS, LEVELS[1:]):
        data, _ = _own_transforms(higher)
        assert data.get("extends") == lower, f"{higher} should extend {lower}"
    assert "extends" not in _own_transforms("off")[0]


@pytest.mark.parametrize("lower,higher", list(zip(LEVELS, LEVELS[1:])))
def test_higher_level_starts_with_the_lower_levels_transforms(lower, higher):
    low = [t.name for t in profile(lower).transforms]
    high = [t.name for t in profile(higher).transforms]
    assert high[: len(low)] == low
    assert len(high) > len(low), f"{higher} adds nothing to {lower}"
    # what follows is exactly the higher level's own list, in its order
    assert high[len(low):] == _own_transforms(higher)[1]
    # and the shared prefix is the same transforms, not just the same names
    for a, b in zip(profile(lower).transforms, profile(higher).transforms):
        assert type(a) is type(b) and a.allow == b.allow


def test_off_has_no_transforms():
    assert profile("off").transforms == []
    assert profile("aggressive").level == "aggressive"


@pytest.mark.parametrize("level", ("aggressive", "vowels"))
def test_a_label_made_of_a_heading_keeps_its_protected_tokens(level):
    """aggressive turns the deepest headings into labels; the heading's text
    was protected whole, and the label's words are compressed: the code,
    quoted text and paths inside it must still come through (they used to
    lose their words: "`the a`" -> "``")."""
    doc = '# Guide\n\n### Run `the a` with "the x" in docs/the/configuration.md\n\nRun it.\n'
    out = compress(load_profile("default", level), doc).text
    assert in_order(["`the a`", '"the x"', "docs/the/configuration.md"], out) == [], out
    assert out.endswith(":\n\nRun it.\n"), out  # it was made a label


@pytest.mark.parametrize("level", LEVELS)
def test_a_short_cell_with_an_escaped_pipe_is_a_value(level):
    """"a \\| b" is one cell (the pipe is escaped): a value, kept whole in the
    table and once the table is flattened."""
    doc = "| Op | Value |\n|---|---|\n| or | a \\| b |\n| and | the \\| c |\n"
    once = compress(profile(level), doc).text
    twice = compress(profile(level), once).text
    assert in_order(["a \\| b", "the \\| c"], once) == [], once
    assert twice == once
