"""Where the report's errors come from.

A source is a function `(report, chain) -> (errors, count)`: the list of
error dicts ({tool, message, time, line, tool_use_id}) and how many there
were in all.  The default reads them from the transcript's tool results
(`is_error`, or an error marker of the report style).  Another store, such
as the tool memory of the hooks, plugs in by passing its own function to
`engine.session.build_report(..., errors=...)`.
"""


def from_transcript(report, chain):
    """Tool results marked as errors in the transcript itself."""
    return chain.errors, chain.error_count


def default():
    """The source `engine session report` uses: the one line to change to
    read the errors from another store (e.g. the hooks' tool memory)."""
    return from_transcript
