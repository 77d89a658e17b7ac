"""Message compression: the round trip is exact for any message list of the
supported shapes (property tests), the CLI and its errors, the external
classifier, preserve patterns under their timeout, transcripts, and the
checks `engine validate` runs on message documents."""

import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import HOSTILE, position, problems, run_under_an_address_space_cap, write
from engine.messages import compress_messages, restore_messages
from engine.messages.load import load

PROSE = ("The deploy failed because the cache folder at /var/cache/app was full, so the worker could not write "
         "its lock file. Do not delete the folder by hand; run `app cache prune --older-than 7d` instead. "
         "The dashboard at https://grafana.example.com/d/app shows the disk at 97% since v2.4.1 shipped. "
         "Can we raise the alert threshold to 90%?")


@pytest.fixture(scope="module")
def pipe():
    return load("default")


# -- property: any message list of the supported shapes restores exactly --

words = st.sampled_from(["deploy", "cache", "never", "the", "/etc/app.yaml", "`make test`", "v1.2.3", "42ms",
                         "https://x.example/a", "SELECT", "from", "where", "{", "}", ":", "\n", "\n\n", "```", "    ",
                         "é", "😀", "ok.", "Is it?", "key: value\n", "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12",
                         "\ud800", "x\udfff"])  # lone surrogates: valid JSON carries them ("\ud800")
texts = st.one_of(st.text(max_size=300), st.lists(words, max_size=120).map(" ".join),
                  st.text(st.characters(blacklist_categories=()), max_size=40))
text_block = st.fixed_dictionaries({"type": st.just("text"), "text": texts})
tool_use = st.fixed_dictionaries({"type": st.just("tool_use"), "id": st.text(max_size=8), "name": st.just("Read"),
                                  "input": st.dictionaries(st.text(max_size=5), st.text(max_size=20), max_size=2)})
tool_result = st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": st.text(max_size=8),
                                     "content": st.one_of(texts, st.lists(text_block, max_size=3))})
thinking = st.fixed_dictionaries({"type": st.just("thinking"), "thinking": texts, "signature": st.text(max_size=20)})
content = st.one_of(texts, st.lists(st.one_of(text_block, tool_use, tool_result, thinking), max_size=4))
message = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant", "tool", "developer"]), "content": content}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.one_of(st.none(), texts),
                           "tool_calls": st.lists(st.fixed_dictionaries({"id": st.text(max_size=6), "type": st.just("function")}), max_size=2)}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": st.text(max_size=6), "content": texts}),
    st.just({"role": "user", "content": PROSE}),
    st.just({"role": "user", "content": PROSE + " \ud800"}),
)
message_lists = st.lists(message, max_size=12).flatmap(lambda ms: st.just(ms + ms[: len(ms) // 3]))  # some duplicates


def _dump(value):
    return json.dumps(value, ensure_ascii=False)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=message_lists, recency=st.integers(0, 5))
def test_any_message_list_restores_byte_for_byte(pipe, messages, recency):
    before = _dump(messages)
    result = compress_messages(messages, pipe, recency=recency)
    assert _dump(messages) == before  # the input is never modified
    # through JSON, as the CLI carries it
    carried = json.loads(_dump(result))
    assert _dump(restore_messages(carried["messages"], carried["verbatim"])) == before
    assert len(result["messages"]) == len(messages)
    for k in result["verbatim"]:
        assert result["messages"][int(k)] != messages[int(k)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=message_lists, budget=st.integers(0, 400))
def test_budget_round_trip_and_fit(pipe, messages, budget):
    result = compress_messages(messages, pipe, budget=budget)
    b = result["stats"]["budget"]
    assert (b["used"] <= budget) == b["fits"]
    assert restore_messages(result["messages"], result["verbatim"]) == messages


# -- transcripts --

def _transcript():
    return [
        {"type": "summary", "summary": "old session", "leafUuid": "x"},
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": PROSE}},
        {"type": "assistant", "uuid": "a1", "message": {"role": "assistant", "id": "m1", "content": [
            {"type": "thinking", "thinking": "Let me think about it at length. " * 10, "signature": "sig=="},
            {"type": "text", "text": PROSE + " " + PROSE.replace("deploy", "build")}]}},
        {"type": "progress", "data": {"type": "bash_progress", "output": PROSE}},
        {"type": "user", "uuid": "u2", "message": {"role": "user", "content": "thanks"}},
    ]


def test_transcript_lines_compress_and_restore(pipe):
    lines = _transcript()
    result = compress_messages(lines, pipe, transcript=True, recency=1)
    out = result["messages"]
    assert out[0] == lines[0] and out[3] == lines[3]  # not messages: untouched
    assert set(result["verbatim"]) == {"1", "2"}
    blocks = out[2]["message"]["content"]
    assert blocks[0] == lines[2]["message"]["content"][0]  # thinking and its signature never change
    assert blocks[1]["text"].startswith("[summary: ")
    assert out[2]["uuid"] == "a1"
    assert restore_messages(out, result["verbatim"], transcript=True) == lines


# -- summaries keep references and negations --

def test_summary_keeps_negation_and_references(pipe):
    msgs = [{"role": "user", "content": PROSE * 2}]
    text = compress_messages(msgs, pipe, recency=0)["messages"][0]["content"]
    assert text.startswith("[summary: ")
    for ref in ("Do not delete the folder by hand", "/var/cache/app", "https://grafana.example.com/d/app", "v2.4.1", "97%"):
        assert ref in text


# -- preserve patterns run under a timeout --

def test_runaway_preserve_pattern_times_out_and_is_counted(tmp_path):
    p = write(tmp_path, "slow.yaml", "kind: messages\nname: slow\ndescription: a runaway pattern\nextends: default\n"
              "step_params:\n  preserve_patterns:\n    timeout_ms: 20\n    patterns:\n      - {label: slow, pattern: '(a+)+$'}\n")
    msgs = [{"role": "user", "content": "a" * 5000 + "!"}]
    result = compress_messages(msgs, load(str(p)), recency=0)
    assert result["stats"]["pattern_timeouts"] == 1
    assert result["stats"]["decisions"][0] != "preserve/preserve_patterns/slow"


# -- the external classifier --

CLASSIFIER = """import json, sys, time
m = json.load(sys.stdin)
text = m["content"] if isinstance(m["content"], str) else ""
if "SLOW" in text:
    time.sleep(5)
if "CRASH" in text:
    sys.exit(3)
print("preserve" if "dosage" in text else json.dumps({"decision": "compress"}))
"""


def _classifier_pipeline(tmp_path, mode):
    script = write(tmp_path, "classify.py", CLASSIFIER)
    return load(str(write(tmp_path, f"cls-{mode}.yaml", f"""kind: messages
name: cls
description: with a classifier
extends: default
step_params:
  classifier: {{command: [{json.dumps(sys.executable)}, {json.dumps(str(script))}], mode: {mode}, timeout_ms: 1500}}
""")))


def test_classifier_hybrid_and_full(tmp_path):
    long = " The patient was seen on Monday and the follow-up is planned for next month at the same clinic."
    msgs = [
        {"role": "user", "content": "Current dosage is 20 mg twice a day." + long},
        {"role": "user", "content": "Nothing special to note today." + long},
        {"role": "user", "content": "SLOW answer expected here." + long},
        {"role": "user", "content": "CRASH the classifier please." + long},
        {"role": "user", "content": "name: api\nreplicas: 3\nimage: registry/api:1.4\nports: [80]\n"
                                    "note: this line is long enough to pass the short rule\nowner: the platform team"},
    ]
    hybrid = compress_messages(msgs, _classifier_pipeline(tmp_path, "hybrid"), recency=0)
    assert hybrid["stats"]["decisions"] == ["preserve/classifier/classifier", "compress/compress", "compress/compress",
                                            "compress/compress", "preserve/hard_structure/yaml_structure"]
    assert hybrid["stats"]["classifier_calls"] == 4 and hybrid["stats"]["classifier_errors"] == 2
    # the classifier's timeout is checked once (above): each call that meets it costs its 1.5 s
    quick = [m for m in msgs if "SLOW" not in m["content"]]
    full = compress_messages(quick, _classifier_pipeline(tmp_path, "full"), recency=0)
    # full: the heuristics are skipped, the classifier sees the YAML too (and says compress)
    assert full["stats"]["classifier_calls"] == 4
    assert full["stats"]["decisions"][3] == "compress/compress"
    # messages inside the recency window never reach the classifier
    recent = compress_messages(quick, _classifier_pipeline(tmp_path, "full"), recency=2)
    assert recent["stats"]["classifier_calls"] == 2


def test_a_classifier_gets_a_lone_surrogate_escaped_and_a_non_utf8_answer_is_no_answer(tmp_path):
    """Old: a message holding a lone surrogate (valid JSON, "\\ud800") made
    compress_messages raise UnicodeEncodeError while writing the classifier's
    stdin (a traceback from `engine messages compress`), and an answer that
    is not UTF-8 would have raised UnicodeDecodeError.  Now the classifier
    reads the surrogate as its JSON escape, and a non-UTF-8 answer counts as
    a classifier error."""
    long = " The patient was seen on Monday and the follow-up is planned for next month at the same clinic."
    script = write(tmp_path, "echo.py", "import json, sys\nraw = sys.stdin.buffer.read()\n"
                   "m = json.loads(raw.decode('utf-8'))\n"
                   "print('preserve' if m['content'].endswith('\\ud800') and b'\\\\ud800' in raw else 'compress')\n")
    odd = write(tmp_path, "odd.py", "import sys\nsys.stdin.read()\nsys.stdout.buffer.write(b'\\xff\\xfe preserve')\n")

    def pipeline(name, path):
        return load(str(write(tmp_path, f"{name}.yaml", f"""kind: messages
name: {name}
description: a classifier
extends: default
step_params:
  classifier: {{command: [{json.dumps(sys.executable)}, {json.dumps(str(path))}], mode: hybrid, timeout_ms: 5000}}
""")))

    msgs = [{"role": "user", "content": "Current dosage is 20 mg twice a day." + long + " \ud800"}]
    out = compress_messages(msgs, pipeline("echo", script), recency=0)
    assert out["stats"]["decisions"] == ["preserve/classifier/classifier"], out["stats"]
    out = compress_messages(msgs, pipeline("odd", odd), recency=0)
    assert out["stats"]["classifier_errors"] == 1 and out["stats"]["decisions"] == ["compress/compress"], out["stats"]
    assert restore_messages(out["messages"], out["verbatim"], check=out["check"]) == msgs


# -- the command line --

def test_cli_compress_restore_byte_exact(cli, tmp_path):
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": PROSE * 3},
            {"role": "user", "content": PROSE * 3}, {"role": "assistant", "content": "ok"}]
    src = write(tmp_path, "in.json", _dump(msgs) + "\n")
    r = cli("messages", "compress", src, "--json", "--recency", "1")
    assert r.returncode == 0, r
    obj = json.loads(r.out)
    assert set(obj) >= {"messages", "verbatim", "stats"}
    assert obj["stats"]["deduplicated"] == 1 and obj["stats"]["tokens_after"] < obj["stats"]["tokens_before"]
    back = cli("messages", "restore", "-", input=r.out)
    assert back.returncode == 0, back
    assert back.out_bytes == src.read_bytes()
    plain = cli("messages", "compress", src, "--recency", "1")
    assert json.loads(plain.out) == obj["messages"]


def test_a_pack_is_written_in_pieces_that_make_the_bytes_one_dump_gives(pipe):
    """Old: `compress --json` wrote its pack as one string (json.dumps'
    list of all its parts joined, the string plus its line break, an
    encoded copy to check it): at the 20 MB input of the audit that was the
    run's peak.  Now each message, original and member is written on its
    own: the same bytes, no piece larger than the largest of them."""
    from engine.base.strictjson import dumps_utf8, write_utf8

    msgs = [{"role": "user", "content": PROSE + f" {i} \ud800 é"} for i in range(30)] + [
        {"role": "assistant", "content": [{"type": "text", "text": PROSE}], "meta": {}, "n": [1.5, None, True, []]}]
    pack = compress_messages(msgs, pipe, count_tokens=True)
    odd = {1: "int key", "x": {"y": [{}, [], {"z": 1e300}]}, "s": "\udfff"}
    for value in (pack, pack["messages"], [], {}, odd, [odd, [odd]], "text \ud800", 3):
        pieces = []
        write_utf8(value, pieces.append)
        assert "".join(pieces) == dumps_utf8(value)
    pieces = []
    write_utf8(pack, pieces.append)
    assert max(map(len, pieces)) <= max(len(dumps_utf8(v)) for part in (pack["messages"], list(pack["verbatim"].values()),
                                                                       [pack["stats"], pack["check"]]) for v in part)


@pytest.mark.parametrize("transcript", [False, True])
def test_cli_restore_to_a_file_is_the_input_byte_for_byte_whatever_the_text_holds(cli, tmp_path, transcript):
    """Old: restore wrote through the stream that escapes for a terminal,
    to a pipe as well: a C1 control (U+0085, NEL) or a bidi override
    (U+202E) came back as `\\u0085`, `\\u202e`: equal as data, but not
    the bytes of json.dumps(..., ensure_ascii=False) the docs promise.  Now
    exact to a pipe or a file (a lone surrogate, which UTF-8 cannot carry,
    as its JSON escape).  compress --json stays JSON equal as data, escaped
    (tests/test_cli_controls.py)."""
    odd = "NEL\u0085 RLO\u202e ESC\u001b é"
    msgs = [{"role": "user", "content": PROSE * 3 + odd}, {"role": "user", "content": PROSE * 3 + odd},
            {"role": "assistant", "content": "ok " + odd}]
    if transcript:
        lines = [{"type": m["role"], "message": m} for m in msgs]
        src = write(tmp_path, "t.jsonl", "".join(_dump(line) + "\n" for line in lines))
        extra = ["--transcript"]
    else:
        src = write(tmp_path, "in.json", _dump(msgs) + "\n")
        extra = []
    packed = cli("messages", "compress", src, "--json", "--recency", "1", *extra)
    assert packed.returncode == 0 and json.loads(packed.out)["stats"]["deduplicated"] == 1, packed
    back = cli("messages", "restore", "-", input=packed.out)
    assert back.returncode == 0 and back.out_bytes == src.read_bytes(), back
    surrogate = write(tmp_path, "s.json", json.dumps([{"role": "user", "content": "half \ud800 é"}]) + "\n")
    packed = cli("messages", "compress", surrogate, "--json")
    back = cli("messages", "restore", "-", input=packed.out)
    assert back.returncode == 0 and back.out_bytes.decode("utf-8") == '[{"role": "user", "content": "half \\ud800 é"}]\n'


def test_cli_a_lone_surrogate_in_valid_json_round_trips(cli, tmp_path):
    """JSON may escape half a surrogate pair ("\\ud800"): the duplicate
    finder hashes such text too, and the command restores it."""
    msgs = [{"role": "user", "content": PROSE * 3 + " \ud800"}, {"role": "user", "content": PROSE * 3 + " \ud800"}]
    src = write(tmp_path, "in.json", json.dumps(msgs) + "\n")
    r = cli("messages", "compress", src, "--json", "--recency", "0")
    assert r.returncode == 0, r
    assert json.loads(r.out)["stats"]["deduplicated"] == 1
    back = cli("messages", "restore", "-", input=r.out)
    assert back.returncode == 0 and json.loads(back.out) == msgs, back


def test_cli_refuses_numbers_its_output_could_not_write_as_json(cli, tmp_path):
    """Old: 1e400 (valid JSON) came out as Infinity (no JSON reader takes
    it back), and NaN passed through: one line at the value's FILE:LINE:COL
    (it named only the file, and the line of a transcript), exit 1, nothing
    printed on stdout.  A string holding "NaN" or "1e400" is no value."""
    src = write(tmp_path, "in.json", '[{"role": "user",\n  "content": "NaN 1e400", "n": 1e400}]\n')
    jl = write(tmp_path, "t.jsonl", '{"type": "user", "message": {"role": "user", "content": "x"}}\n'
               '{"type": "user", "n": -Infinity, "message": {"role": "user", "content": "x"}}\n')
    for args, where in ((["compress", src], f"{src}:2:32: the number 1e400"), (["restore", src], f"{src}:2:32: "),
                        (["compress", "--transcript", jl], f"{jl}:2:23: -Infinity is not JSON")):
        r = cli("messages", *args)
        assert r.returncode == 1 and r.out == "" and "Traceback" not in r.err, r
        assert r.err.startswith(where) and len(r.err.splitlines()) == 1, r.err


def test_cli_refuses_an_object_naming_a_key_twice_at_its_place(cli, tmp_path):
    """Old: `{"content": "a", "content": "b"}` (valid JSON) was read as its
    last value: the output, and what restore gave back, held "b" alone,
    with exit 0 and nothing said.  Now one line at the object, exit 1,
    nothing on stdout: in a message, in a request body and in a transcript's
    line, and at any depth the reader takes."""
    deep = "[" * 500 + "]" * 500
    cases = {"in.json": ([], '[{"role": "user", "content": "x"},\n {"role": "user", "content": "a", "content": "b"}]',
                         ":2:2: ", "content"),
             "body.json": ([], f'{{"x": {deep}, "messages": [],\n "messages": [{{"role": "user", "content": "b"}}]}}',
                           ":1:1: ", "messages"),
             "t.jsonl": (["--transcript"], '{"type": "user", "message": {"role": "user", "content": "x"}}\n'
                         '{"type": "user", "message": {"role": "user", "content": "x", "role": "assistant"}}',
                         ":2:29: ", "role")}
    for name, (extra, text, place, key) in cases.items():
        src = write(tmp_path, name, text + "\n")
        r = cli("messages", "compress", src, *extra)
        assert r.returncode == 1 and r.out == "" and "Traceback" not in r.err, (name, r)
        assert r.err.startswith(f"{src}{place}the key \"{key}\" appears twice") and len(r.err.splitlines()) == 1, r.err
        assert "keep one" in r.err, r.err
    ok = write(tmp_path, "ok.json", f'[{{"role": "user", "content": "a", "x": {deep}, "y": {{"content": "b"}}}}]\n')
    r = cli("messages", "compress", ok)
    assert r.returncode == 0 and json.loads(r.out)[0]["y"] == {"content": "b"}, r


def test_cli_a_byte_order_mark_is_said_in_the_users_words(cli, tmp_path):
    """Old: "not JSON: Unexpected UTF-8 BOM (decode using utf-8-sig)",
    advice for a Python program, not for the file's writer."""
    for name, extra in (("in.json", []), ("t.jsonl", ["--transcript"])):
        src = tmp_path / name
        src.write_bytes(b'\xef\xbb\xbf[{"role": "user", "content": "x"}]\n' if not extra else
                        b'\xef\xbb\xbf{"type": "user", "message": {"role": "user", "content": "x"}}\n')
        r = cli("messages", "compress", str(src), *extra)
        assert r.returncode == 1 and r.out == "" and "Traceback" not in r.err, r
        assert r.err.startswith(f"{src}:1:1: ") and "byte order mark" in r.err and "utf-8-sig" not in r.err, r.err
        assert "without one" in r.err and len(r.err.splitlines()) == 1, r.err


def test_cli_says_where_a_refused_number_is_past_a_long_integer_it_takes(cli, tmp_path):
    """Old: an integer of 400 digits (valid JSON, read and written back as
    it is) before the NaN was named as the place of the NaN: the position
    scan took any number past a float's range as refused.  An integer is
    refused only when it is too long to read at all."""
    long_int = "1" * 400
    src = write(tmp_path, "in.json", f'[{{"role": "user", "content": "a", "n": {long_int}}},\n'
                '  {"role": "user", "content": NaN}]\n')
    jl = write(tmp_path, "t.jsonl", f'{{"type": "user", "n": {long_int}, "m": 1e400}}\n')
    for args, where in ((["compress", src], f"{src}:2:31: NaN is not JSON"),
                        (["compress", "--transcript", jl], f"{jl}:1:{30 + 400}: the number 1e400")):
        r = cli("messages", *args)
        assert r.returncode == 1 and r.out == "" and "Traceback" not in r.err, r
        assert r.err.startswith(where) and len(r.err.splitlines()) == 1, r.err
    ok = write(tmp_path, "ok.json", f'[{{"role": "user", "content": "a", "n": {long_int}}}]\n')
    r = cli("messages", "compress", ok)
    assert r.returncode == 0 and json.loads(r.out)[0]["n"] == int(long_int), r


def test_cli_an_integer_too_long_to_read_says_what_to_do(cli, tmp_path):
    """Old: Python's own words, "Exceeds the limit (4300 digits) for
    integer string conversion ...; use sys.set_int_max_str_digits() to
    increase the limit": advice for a Python program, not for the file's
    writer.  Now one line at the integer, saying to write it as a string."""
    huge = "7" * 5000
    src = write(tmp_path, "in.json", f'[{{"role": "user",\n  "content": "a", "n": -{huge}}}]\n')
    jl = write(tmp_path, "t.jsonl", f'{{"type": "user"}}\n{{"type": "user", "n": {huge}}}\n')
    for args, where in ((["compress", src], f"{src}:2:24: "), (["restore", src], f"{src}:2:24: "),
                        (["compress", "--transcript", jl], f"{jl}:2:23: ")):
        r = cli("messages", *args)
        assert r.returncode == 1 and r.out == "" and "Traceback" not in r.err, r
        assert r.err == f"{where}an integer of more than 4300 digits is too long to read; write it as a string\n", r.err


def test_cli_request_body_and_transcript(cli, tmp_path):
    body = {"model": "m", "messages": [{"role": "user", "content": PROSE * 2}, {"role": "user", "content": "hi"}]}
    src = write(tmp_path, "body.json", _dump(body) + "\n")
    r = cli("messages", "compress", src, "--json", "--recency", "0")
    assert r.returncode == 0, r
    assert json.loads(r.out)["messages"]["model"] == "m"
    assert cli("messages", "restore", "-", input=r.out).out_bytes == src.read_bytes()
    jl = write(tmp_path, "t.jsonl", "".join(_dump(x) + "\n" for x in _transcript()))
    r = cli("messages", "compress", jl, "--transcript", "--json", "--recency", "0")
    assert r.returncode == 0, r
    assert cli("messages", "restore", "-", input=r.out).out_bytes == jl.read_bytes()


def test_cli_budget_that_cannot_fit_says_so(cli, tmp_path):
    src = write(tmp_path, "in.json", _dump([{"role": "system", "content": PROSE}]))
    r = cli("messages", "compress", src, "--budget", "5")
    assert r.returncode == 1
    assert "even with no recency window" in r.err and "preserved messages included" in r.err


def test_cli_budget_and_recency_together_is_a_user_error(cli, tmp_path):
    """Audit: --budget chose the recency window and a --recency beside it
    was dropped without a word."""
    src = write(tmp_path, "in.json", _dump([{"role": "user", "content": PROSE}]))
    r = cli("messages", "compress", src, "--budget", "500", "--recency", "3")
    assert r.returncode == 1 and r.out == "" and "Traceback" not in r.err, r
    assert r.err.startswith("engine: --budget chooses the recency window itself") and "not both" in r.err, r.err


@pytest.mark.parametrize("text, needle", [('[{"role": "user",\n  "content": ]', "]"), ("", None)])
def test_cli_bad_json_is_one_line_with_position(cli, tmp_path, text, needle):
    src = write(tmp_path, "bad.json", text)
    r = cli("messages", "compress", src)
    assert r.returncode == 1
    [p] = problems(r)
    assert p.is_in(src, tmp_path) and "not JSON" in p.msg
    if needle:
        assert (p.line, p.col) == position(text, needle)


def test_a_transcript_given_without_transcript_says_to_add_it(cli, tmp_path):
    src = write(tmp_path, "s.jsonl", '{"type": "user"}\n{"type": "assistant"}\n')
    r = cli("messages", "compress", src)
    [p] = problems(r)
    assert r.returncode == 1 and (p.line, p.col) == (2, 1) and "add --transcript" in p.msg, r
    r = cli("messages", "restore", src)
    [p] = problems(r)
    assert r.returncode == 1 and "--transcript" not in p.msg and "compress --json" in p.msg, r


def test_cli_wrong_shapes(cli, tmp_path):
    r = cli("messages", "compress", write(tmp_path, "o.json", '{"a": 1}'))
    assert r.returncode == 1 and "expected a JSON list of messages" in r.err
    r = cli("messages", "restore", write(tmp_path, "r.json", '{"messages": [], "verbatim": {"7": {}}}'))
    assert r.returncode == 1 and "names position '7'" in r.err
    r = cli("messages", "compress", write(tmp_path, "t.jsonl", '{"type": "user"}\nnot json\n'), "--transcript")
    assert r.returncode == 1
    [p] = problems(r)
    assert p.line == 2


# -- engine validate on message documents --

def test_validate_reports_pipeline_mistakes_at_their_place(cli, tmp_path):
    text = """kind: messages
name: mine
description: mistakes
extends: default
step_params:
  preserve_patterns:
    patterns:
      - {label: bad, pattern: '(unclosed'}
"""
    p = write(tmp_path, "mine.yaml", text)
    r = cli("validate", p)
    assert r.returncode == 1
    [prob] = problems(r)
    assert prob.is_in(p, tmp_path) and "invalid regular expression" in prob.msg
    assert (prob.line, prob.col) == position(text, "'(unclosed'")


def test_compiling_a_pipeline_says_a_step_params_mistake_where_validate_does(cli, tmp_path):
    """A pattern a pipeline sets in step_params: compiling it (messages
    compress) names its place, as validate does (it said 1:1 before)."""
    text = ("kind: messages\nname: mine\ndescription: d\nextends: default\nstep_params:\n  preserve_patterns:\n"
            "    patterns:\n      - {label: bad, pattern: '(unclosed'}\n")
    p = write(tmp_path, "mine.yaml", text)
    r = cli("messages", "compress", "-", "--profile", p, input='[{"role": "user", "content": "hi"}]')
    assert r.returncode == 1 and r.out == "", r
    [prob] = problems(r)
    assert prob.is_in(p, tmp_path) and "invalid regular expression" in prob.msg, prob
    assert (prob.line, prob.col) == position(text, "'(unclosed'"), prob


def test_a_step_params_value_out_of_its_schema_is_said_at_that_value(cli, tmp_path):
    """Old: every schema error of a step's params was said at the step's
    first key (`command:`, line 7), not at the value (`mode:`, line 9)."""
    text = ("kind: messages\nname: legal\ndescription: d\nextends: default\nstep_params:\n  classifier:\n"
            "    command: [python3, /x.py]\n    timeout_ms: 100\n    mode: hybridd\n")
    p = write(tmp_path, "m.yaml", text)
    r = cli("validate", p)
    assert r.returncode == 1, r
    [prob] = problems(r)
    assert prob.is_in(p, tmp_path) and "hybridd" in prob.msg and (prob.line, prob.col) == position(text, "hybridd"), prob


def test_a_pipeline_pattern_that_asks_for_gigabytes_fails_in_the_compile_box_at_its_place(cli):
    """A message pipeline compiles in a box, as a profile does: a pattern
    that asks the regex module for gigabytes is one error at its place, in
    well under the address space this test allows (before: the compile ran
    out of it, after 5 s, and said "pattern does not compile" at 1:1)."""
    text = ("kind: messages\nname: evil\ndescription: d\nextends: default\nstep_params:\n  preserve_patterns:\n"
            f"    patterns:\n      - {{label: x, pattern: '{HOSTILE}'}}\n")
    p = write(cli.cwd, "evil.yaml", text)
    write(cli.cwd, "m.json", '[{"role": "user", "content": "hi"}]')
    r = run_under_an_address_space_cap(cli, "messages", "compress", "m.json", "--profile", "./evil.yaml")
    assert r.returncode == 1 and r.out == "" and "Traceback" not in r.err, r
    [prob] = problems(r)
    assert prob.is_in(p, cli.cwd) and (prob.line, prob.col) == position(text, f"'{HOSTILE}'"), prob
    assert "compiling this pattern needs more than" in prob.msg, prob


@pytest.mark.parametrize("snippet, needle, words", [
    ("  - {name: s, kind: detect, description: d, detectors: [no_such_detector]}", "no_such_detector", "no built-in detector"),
    ("  - {name: s, kind: code_split, description: d, category: fenced_cod, min_prose_chars: 1}", "fenced_cod", "fenced_code"),
    ("  - {name: s, kind: shorty, description: d}", "shorty", "unknown kind 'shorty'"),  # at the kind, not the step
])
def test_validate_unknown_names(cli, tmp_path, snippet, needle, words):
    text = f"kind: messages\nname: mine\ndescription: d\nextends: default\nsteps:\n{snippet}\n"
    p = write(tmp_path, "mine.yaml", text)
    r = cli("validate", p)
    assert r.returncode == 1
    [prob] = problems(r)
    assert words in prob.msg
    assert (prob.line, prob.col) == position(text, needle)


def test_validate_marker_with_unknown_field(cli, tmp_path):
    text = """kind: messages
name: mine
description: d
extends: default
markers:
  summary: "[summary: {summry}]"
  entities: " | refs: {entities}"
  entity_separator: ", "
  code_split: "{summary}{entities}\\n{code}"
  code_separator: "\\n"
  duplicate: "[dup {index}]"
  near_duplicate: "[dup {index} {similarity}]"
"""
    p = write(tmp_path, "mine.yaml", text)
    r = cli("validate", p)
    [prob] = problems(r)
    assert "{summry}" in prob.msg and (prob.line, prob.col) == position(text, '"[summary: {summry}]"')


def test_validate_detector_self_test_failure(cli, tmp_path):
    text = """kind: detector
name: mine
detector: pattern
description: d
params: {patterns: ['\\bfoo\\b']}
examples:
  fire: ["foo here", "no match here"]
  quiet: ["bar"]
"""
    p = write(tmp_path, "mine.yaml", text)
    r = cli("validate", p)
    [prob] = problems(r)
    assert "should fire" in prob.msg and (prob.line, prob.col) == position(text, '"no match here"')


def test_builtin_message_documents_validate(cli):
    import glob

    from conftest import REPO

    files = sorted(glob.glob(str(REPO / "pipelines/messages/**/*.yaml"), recursive=True))
    assert len(files) >= 12
    r = cli("validate", *files)
    assert r.returncode == 0, r


# -- the seed's false positives: the fix is in the data, and the cases catch it --

SEED_LIKE = {
    # a few key-value lines in a row are enough (no share of the lines)
    "yaml_structure": ("lines", "{line_pattern: '\\A[ \\t]*(?:-[ \\t]+)?[A-Za-z_][\\w.-]*:(?:[ \\t]+\\S|[ \\t]*\\Z)', "
                       "min_lines: 2, min_share: 0.0, consecutive: true}"),
    # uneven lines alone, markdown prose or not
    "high_line_length_variance": ("line_variance", "{min_lines: 4, min_cv: 1.2}"),
    # keywords in any case, no statement shape
    "sql_content": ("keywords", "{case_sensitive: false, weak: [WHERE, JOIN], keywords: [SELECT, FROM, WHERE, JOIN, UPDATE, SET], "
                    "min_keywords: 3}"),
}


def _golden_false_positives():
    from conftest import REPO
    from engine.core.yamlload import load_file

    cases = load_file(REPO / "tests/messages/detectors.yaml").data["cases"]
    return [c for c in cases if c["detector"] in SEED_LIKE and not c["fires"]]


@pytest.mark.parametrize("case", _golden_false_positives(), ids=lambda c: c["name"])
def test_seed_like_detector_fires_where_the_builtin_one_does_not(tmp_path, case):
    from engine.messages.load import load_detector

    kind, params = SEED_LIKE[case["detector"]]
    p = write(tmp_path, "seed.yaml", f"kind: detector\nname: seed\ndetector: {kind}\ndescription: the seed's rule\n"
              f"params: {params}\nexamples: {{}}\n")
    assert load_detector(str(p)).fires(case["text"], {}) is True  # the seed's rule: frozen as structure
    assert load_detector(case["detector"]).fires(case["text"], {}) is False  # the built-in document: prose


def test_assistant_prose_pipeline_leaves_user_lines_alone():
    lines = _transcript()
    result = compress_messages(lines, "assistant_prose", transcript=True, recency=0)
    assert set(result["verbatim"]) == {"2"}  # the assistant line only; the user prompt stays
    assert result["messages"][1] == lines[1]
    assert restore_messages(result["messages"], result["verbatim"], transcript=True) == lines


def test_only_the_same_text_is_called_a_duplicate(pipe):
    """Old: texts alike in every word shingle (words lower-cased) were
    marked `[duplicate of message N]` though they differ (/srv/App vs
    /srv/app, an id's case), and a copy of a message that was itself a
    near-duplicate of a later one was called an exact duplicate of that
    later one.  Now `duplicate` means the same text; a pair that differs is
    a near-duplicate, under 100% alike, measured against the copy named."""
    text = ("The build reads its configuration from /srv/App/Config/settings.yaml and writes the report to "
            "/srv/App/Reports/out.txt; set BUILD_ID to AbC123dEf before running it, and keep the cache in "
            "/var/Cache/App between runs so that the second run is fast.")
    other = text.replace("/srv/App/Config", "/srv/app/config").replace("AbC123dEf", "abc123def")
    filler = [{"role": "user", "content": "ok"}] * 4
    out = compress_messages([{"role": "user", "content": text}, {"role": "user", "content": other}] + filler, pipe)
    assert out["stats"]["decisions"][0] == "duplicate/duplicates/fuzzy", out["stats"]
    assert out["messages"][0]["content"] == "[near-duplicate of message 2: 99% alike]"
    changed = text.replace("run is fast.", "run is quick.")
    chain = [{"role": "user", "content": text}, {"role": "user", "content": text}, {"role": "user", "content": changed}]
    out = compress_messages(chain + filler, pipe)
    assert out["stats"]["decisions"][:2] == ["duplicate/duplicates/fuzzy"] * 2, out["stats"]
    assert out["messages"][0]["content"] == out["messages"][1]["content"]
    assert out["messages"][0]["content"].startswith("[near-duplicate of message 3: ")
    same = compress_messages([{"role": "user", "content": text}] * 3 + filler, pipe)
    assert [m["content"] for m in same["messages"][:2]] == ["[duplicate of message 3]"] * 2


def test_a_reference_counts_the_messages_from_one_as_the_model_reads_them(pipe):
    """Old: `[duplicate of message 2]` named the copy by its 0-based
    position (in a transcript, its line among progress and other lines):
    in [A, "ok", A] the first message pointed at "message 2", which a
    reader counting messages takes for "ok".  Now {number} counts the
    messages from 1 ({index} stays the position, for a pipeline's own
    markers)."""
    text = ("Here is the error again: the worker loses its queue connection after the restart, and the health "
            "check keeps failing every thirty seconds until someone restarts it by hand.")
    msgs = [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted, thanks."},
            {"role": "user", "content": text}]
    assert compress_messages(msgs, pipe, recency=0)["messages"][0]["content"] == "[duplicate of message 3]"
    lines = [{"type": "summary", "summary": "s"}, {"type": "user", "message": msgs[0]},
             {"type": "progress", "data": {}}, {"type": "assistant", "message": msgs[1]},
             {"type": "user", "message": msgs[2]}]
    out = compress_messages(lines, pipe, transcript=True, recency=0)
    assert out["messages"][1]["message"]["content"] == "[duplicate of message 3]"
    assert restore_messages(out["messages"], out["verbatim"], transcript=True, check=out["check"]) == lines


def test_a_near_duplicate_differing_in_a_negation_is_not_a_reference(pipe):
    # "do not run" 87% alike "please run": a reference would say the opposite
    text = ("When you release the service this week, {} run the database migration before the new build is live "
            "on every node of the cluster, and check the dashboard for the error rate after each step of the "
            "rollout so that we can roll back quickly if the numbers look wrong to anyone on the team.")
    filler = [{"role": "user", "content": "ok"}] * 4
    messages = [{"role": "user", "content": text.format("do not")}, {"role": "user", "content": text.format("please")}]
    out = compress_messages(messages + filler, pipe)
    assert "duplicate" not in out["messages"][0]["content"]
    assert "do not run" in out["messages"][0]["content"]
    same = [messages[0], {"role": "user", "content": text.format("do not") + " Thanks."}]  # alike, same negation
    assert compress_messages(same + filler, pipe)["stats"]["decisions"][0] == "duplicate/duplicates/fuzzy"


@pytest.mark.parametrize("depth", [600, 2000])
def test_cli_says_where_input_nests_too_deep(cli, tmp_path, depth):
    """Old: one line naming only the file.  Now at the bracket that opens
    the first level past messages.max_depth (512), in a list, in a request
    body and in a transcript's line (one level down: the list of lines is
    the first), whether the reader took the text (600) or not (2000)."""
    deep = "[" * depth + "]" * depth
    msg = f'{{"role": "user", "content": "[[[[", "x": {deep}}}'
    cases = {"in.json": ([], f'[{{"role": "user",\n "content": "[[[[", "x": {deep}}}]', 2),  # list, message
             "body.json": ([], f'{{"tools": {{"a":\n {deep}}}, "messages": []}}', 2),  # body, tools
             "t.jsonl": (["--transcript"], f'{{"type": "user"}}\n{{"type": "user", "message": {msg}}}', 3)}
    for name, (extra, text, levels_before) in cases.items():
        src = write(tmp_path, name, text + "\n")
        r = cli("messages", "compress", src, *extra)
        assert r.returncode == 1 and r.out == "" and "Traceback" not in r.err, r
        line = text.splitlines()[1]
        col = line.index(deep) + 512 - levels_before + 1  # the bracket opening level 513
        assert r.err.startswith(f"{src}:2:{col}: JSON nested ") and "nest it less deeply" in r.err, (name, r.err)


@pytest.mark.parametrize("shape", ["list", "body", "transcript"])
def test_cli_input_compress_accepts_is_input_restore_gives_back(cli, tmp_path, shape):
    """The pack nests the input a level or two deeper: the deepest input
    compress accepts (found by bisection) restores; deeper is one line."""
    def text(depth):
        deep = "[" * depth + "]" * depth
        msg = f'{{"role": "user", "content": "hi", "x": {deep}}}'
        return {"list": f"[{msg}]", "body": f'{{"tools": {deep}, "messages": [{msg}]}}',
                "transcript": f'{{"type": "user", "message": {msg}}}'}[shape]

    def compress(depth):
        extra = ["--transcript"] if shape == "transcript" else []
        return cli("messages", "compress", write(tmp_path, "in.json", text(depth) + "\n"), "--json", *extra)

    lo, hi, packed = 1, 3000, None
    while lo <= hi:
        mid = (lo + hi) // 2
        r = compress(mid)
        if r.returncode == 0:
            lo, packed = mid + 1, (mid, r)
        else:
            assert "nested" in r.err and "Traceback" not in r.err, r
            hi = mid - 1
    depth, r = packed
    back = cli("messages", "restore", "-", input=r.out)
    assert back.returncode == 0, (depth, back.err)
    assert json.loads(back.out) == json.loads(text(depth))


def test_a_code_split_message_scans_its_prose_once(pipe, monkeypatch):
    """Old: the prose around a message's code fences was scanned for
    protected spans four times (negations, assertions, entities, and the
    entities again for the refs), with no memo: a message with code cost
    five scans.  Now the prose has a memo of its own: two scans, the
    message and its prose, whatever the summary asks of them."""
    from engine.messages.load import Union

    scanned = []
    real = Union._scan
    monkeypatch.setattr(Union, "_scan", lambda self, text: scanned.append(text) or real(self, text))
    code = "```python\ndef retry(request):\n    return send(request)\n```"
    text = f"{PROSE}\n\n{code}\n\n{PROSE}"
    out = compress_messages([{"role": "assistant", "content": text}], pipe, recency=0)
    assert out["stats"]["decisions"] == ["code_split/code_split"], out["stats"]
    assert code in out["messages"][0]["content"]
    assert len(scanned) == 2, [t[:40] for t in scanned]


def test_near_duplicate_search_lets_go_of_the_shingles_no_later_message_can_reach(pipe, monkeypatch):
    """Old: the word shingles of every message of 200 characters or more
    were held until the last message was compared (a set of ~80 hashes
    each: ~200 MB at the 20 MB input of the audit).  A message is a
    candidate only while it is among the last max_candidates of one of its
    sketch entries; past that its shingles go (a reference resolved later
    computes them again).  Same decisions."""
    import random

    from engine.messages.steps.duplicates import DuplicatesStep

    rng = random.Random(3)
    sentences = [f"The {w} service on {h} failed its health check after the deploy of build {n}, so we rolled back."
                 for w in ("billing", "auth", "search") for h in ("node-a", "node-b") for n in ("41", "42", "43")]
    messages = [{"role": "user", "content": " ".join(rng.choice(sentences) for _ in range(5))} for _ in range(1500)]
    kept = []
    real = DuplicatesStep._resolved
    monkeypatch.setattr(DuplicatesStep, "_resolved", lambda self, run, shingles, ids: kept.append(len(shingles))
                        or real(self, run, shingles, ids))
    out = compress_messages(messages, pipe)
    assert out["stats"]["deduplicated"] > 100, out["stats"]
    assert kept and kept[0] < 500, kept
    assert restore_messages(out["messages"], out["verbatim"], check=out["check"]) == messages


def test_a_runs_protect_scans_are_let_go_once_its_result_is_built(pipe, monkeypatch):
    """Old: the protect scans of every message (their spans, most of what a
    run holds) stayed until compress_messages returned, through the token
    counting that loads the tokenizer.  Now a message's scans go once it is
    rendered, and all of them once the result is built."""
    from engine.messages import run as runner

    runs = []
    real = runner.apply
    monkeypatch.setattr(runner, "apply", lambda decided, window: runs.append(decided.run) or real(decided, window))
    msgs = [{"role": "user", "content": PROSE + f" Step {i}."} for i in range(8)]
    out = compress_messages(msgs, pipe, recency=0, count_tokens=True)
    assert out["stats"]["compressed"] + out["stats"]["deduplicated"] == 8 and runs
    assert runs[-1]._memos == {}
