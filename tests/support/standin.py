"""A local stand-in of a model API: a threaded HTTP server on 127.0.0.1 that
answers scripted turns and records every request body it receives.

The rule it keeps: a turn is picked by counting the main-loop requests served
so far, never by counting earlier tool calls in the request (a compaction
drops those, and a stand-in that counted them would loop). A request that is
not a main-loop turn (a compaction summary, a title, a probe) is answered
without consuming the script. Nothing is forwarded anywhere.

The wire format is a subclass's: `ResponsesAPI` (OpenAI Responses, for Codex
and Copilot) in responses_api.py, `GeminiAPI` in gemini_api.py. A subclass
says which requests are main-loop turns (`kind`) and how a turn is written
(`answer`).

Script turns (shared by every wire format):

    shell("echo hi")          the agent's shell tool runs `echo hi`
    call("read_file", path=...)  any other tool, by its name in the request
    say("done")               a final text that ends the turn
    custom("apply_patch", text)  a freeform tool with a text input (the
                              Responses API's custom_tool_call: Codex's patch)
    a callable(body) -> turn  decided when the request arrives
"""

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Shell:
    command: str


@dataclass
class Call:
    name: str
    args: dict


@dataclass
class Say:
    text: str


@dataclass
class Custom:
    name: str
    input: str


def shell(command):
    """A scripted turn: the agent's own shell tool runs `command`."""
    return Shell(command)


def call(name, /, **args):
    """A scripted turn: the tool `name` (as the request's tool list names it)
    with `args` (a `name` among them too: Copilot's task takes one)."""
    return Call(name, args)


def custom(name, text):
    """A scripted turn: the freeform tool `name` with the text `text` (a Responses API custom_tool_call)."""
    return Custom(name, text)


def say(text):
    """A scripted turn: a final text that ends the agent's turn."""
    return Say(text)


# What the request is, for the script: a turn of the agent's main loop, a
# compaction (summary) request, or anything else the agent asks on the side.
MAIN, SUMMARY, SIDE = "main", "summary", "side"


@dataclass
class Request:
    method: str
    path: str
    headers: dict
    body: object  # parsed JSON, raw bytes when not JSON, None when empty
    kind: str = SIDE  # MAIN, SUMMARY or SIDE
    turn: object = None  # the turn it was answered with


class StandIn:
    """The server and the script. `requests` are the bodies of the main-loop
    requests in order, `summaries` those of the compaction requests, `log`
    every request. After the script each main request gets `say(after)`.
    `summary_after=N`: a compaction request is answered only once N more
    main-loop requests have been served since it came (at most
    `summary_wait` seconds later): an agent that compacts in the background
    (Copilot) goes on with its turn meanwhile."""

    after = "done."
    summary_text = "SUMMARY_OF_THE_SESSION: the user asked; the shell ran; the answer was given."

    def __init__(self, script=(), summary=None, tokens=1000, cached=0, summary_after=0, summary_wait=20.0,
                 numbered_from=0):
        self.script = list(script)
        # the answers' ids count on from here: a second run of one session
        # (a resume) gets ids of its own, as from a real API
        self.numbered_from = numbered_from
        self.summary_after, self.summary_wait = summary_after, summary_wait
        self.summary = summary or self.summary_text
        self.tokens = tokens  # input tokens each answer reports: a number, or a function of the Request
        self.cached = cached  # how many of those the answer reports as read from the prompt cache (idem)
        self.log = []
        self.served = 0  # main-loop requests answered: the script's only clock
        self._lock = threading.Lock()
        self.server = None

    def bind(self):
        """Make the listening socket on 127.0.0.1:<free port>, in the calling
        thread's network namespace (offline.py calls it inside the agent's)."""
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        if self.server is None:
            self.bind()
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()  # quick to shut down
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @property
    def requests(self):
        return [r.body for r in self.log if r.kind == MAIN]

    @property
    def summaries(self):
        return [r.body for r in self.log if r.kind == SUMMARY]

    def next_turn(self, req):
        """The turn for a request of kind `req.kind` (under the lock)."""
        if req.kind == SUMMARY:
            return Say(self.summary)
        if req.kind != MAIN:
            return Say("Test")  # a title or another side question: any short text
        turn = self.script[self.served] if self.served < len(self.script) else Say(self.after)
        self.served += 1
        return turn(req.body) if callable(turn) else turn

    def respond(self, req):
        """(status, content type, bytes) for one request, recorded first."""
        with self._lock:
            self.log.append(req)
            req.kind = self.kind(req)
            if req.kind is None:
                return self.other(req)
            req.turn = self.next_turn(req)
            n = self.numbered_from + len(self.log)
            goal = self.served + self.summary_after
        if req.kind == SUMMARY and self.summary_after:
            self._wait_for(goal)
        return self.answer(req, req.turn, n)

    def _wait_for(self, served):
        """Hold this request (its own thread) until `served` main-loop
        requests have been answered, or summary_wait seconds have passed."""
        end = time.monotonic() + self.summary_wait
        while self.served < served and time.monotonic() < end:
            time.sleep(0.01)

    def input_tokens(self, req):
        """The input tokens the answer to `req` reports (the agent's usage figures)."""
        return self.tokens(req) if callable(self.tokens) else self.tokens

    def cached_tokens(self, req):
        """The part of input_tokens the answer reports as a prompt cache hit."""
        return self.cached(req) if callable(self.cached) else self.cached

    # ------------------------------------------------ the wire format's part

    def kind(self, req):
        """MAIN, SUMMARY, SIDE for a model request; None for anything else."""
        raise NotImplementedError

    def other(self, req):
        """The answer to a request that is not a model call (a probe, a list)."""
        return 200, "application/json", b"{}"

    def answer(self, req, turn, n):
        """(status, content type, bytes) that carry `turn`; n numbers ids."""
        raise NotImplementedError


def _handler(api):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet: the log is api.log
            pass

        def _serve(self):
            n = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(n) if n else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw
            status, ctype, data = api.respond(Request(self.command, self.path, dict(self.headers), body))
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_POST = do_GET = do_HEAD = do_PUT = do_DELETE = do_PATCH = _serve

    return Handler


def sse(data, event=None):
    """One server-sent event; `event:` line when named."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()
