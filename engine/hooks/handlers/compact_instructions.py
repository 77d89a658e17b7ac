"""compact_instructions: at PreCompact, print the instructions the agent
gives its summary (plain stdout, exit 0): the user's file (`file`, such as
~/.claude/compact-instructions.txt) when it exists, else the template."""

import os

from .base import Handler, HandlerSpec
from .part import Part
from .samples import pick


class CompactInstructionsSpec(HandlerSpec):
    file: str | None
    max_file_bytes: int
    template: str


class CompactInstructions(Handler):
    Spec = CompactInstructionsSpec
    answers = ("compaction_instructions",)  # not run where the agent's YAML takes none (dispatch._carried)
    variables = {"template": {"trigger", "custom_instructions"}}
    samples = pick("trigger", "custom_instructions")

    def due(self, ctx):
        return True

    def user_file(self, ctx):
        """The user's instructions, or None (no file, not a regular file,
        unreadable: the template then)."""
        if not self.spec.file:
            return None
        from engine.base.files import open_regular

        path = os.path.expanduser(self.spec.file)
        try:
            fh = open_regular(path)
        except OSError:
            return None
        except ValueError:
            ctx.log(f"{self.name}: {path} is not a regular file; using the template")
            return None
        with fh:
            data = fh.read(self.spec.max_file_bytes + 1)
        if len(data) > self.spec.max_file_bytes:
            ctx.log(f"{self.name}: {path} is over max_file_bytes ({self.spec.max_file_bytes}); cut there")
            data = data[: self.spec.max_file_bytes]
        return _text(data) or None

    def parts(self, ctx):
        text = self.user_file(ctx)
        if text is None:
            from ..banner import render_cached

            text = render_cached(self.spec.template, ctx.settings["templates"], trigger=ctx.event.trigger,
                                 custom_instructions=ctx.event.custom_instructions).strip("\n")
        return [Part(self.name, stdout=text)] if text else []


def _text(data):
    """The file's text; a character the max_file_bytes cut split is left
    out whole, not turned into a replacement character."""
    import codecs

    return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=False).strip()
