"""ccm_learn (PostToolUse on Bash): a command whose output was over the Bash
threshold is learned for this project, so its next run is intercepted.  A
command whose learned words hold a secret (`mysql -pPASSWORD`) is not
learned: the learned file would keep it."""


class CcmLearn:
    def __init__(self, spec, settings, registry):
        self.name = spec["name"]

    def due(self, ctx):
        return ctx.event.get("tool_name") == "Bash" and not ctx.event.get("agent_id") and bool(ctx.cwd)

    def parts(self, ctx):
        from engine.ccm import config
        from engine.ccm.intercept import WRAPPER_MARK, _starts_with
        from engine.ccm.learned import learn, pattern_of

        command = (ctx.event.get("tool_input") or {}).get("command")
        if not isinstance(command, str) or WRAPPER_MARK in command:
            return []
        settings = config.load()
        size = response_bytes(ctx.event.get("tool_response"))
        if size <= settings["intercept"]["bash"]["threshold_bytes"]:
            return []
        if _starts_with(command, settings["intercept"]["bash"]["pass_through"]):
            return []
        pattern = pattern_of(command, settings["learned"]["words"])
        if pattern and not _holds_secret(pattern, settings):
            learn(config.folder(settings), ctx.cwd, pattern, size, settings["learned"]["expiry_days"])
        return []


def _holds_secret(pattern, settings):
    from engine.ccm.secrets import Secrets

    return Secrets(settings).found_in(pattern)


def response_bytes(resp):
    """Bytes of a Bash tool_response: stdout and stderr (a dict), or the text."""
    if isinstance(resp, str):
        return len(resp.encode("utf-8", "replace"))
    if isinstance(resp, dict):
        return sum(len(v.encode("utf-8", "replace")) for k, v in resp.items() if k in ("stdout", "stderr", "output") and isinstance(v, str))
    return 0
