"""ccm_pin (UserPromptSubmit): `ccm:pin last|next|start|end` directives in a
prompt pin cached outputs; the user is told what was done."""

from .base import Handler, HandlerSpec
from .part import Part


class CcmPinSpec(HandlerSpec):
    directive: str


class CcmPin(Handler):
    Spec = CcmPinSpec

    def __init__(self, spec, settings, registry):
        self.spec = self.Spec(spec)
        self.name = self.spec.name
        self.directive = self.spec.directive

    def due(self, ctx):
        # no settings read for a prompt without a directive: the quiet path stays as it was
        return self.directive in ctx.event.prompt

    def parts(self, ctx):
        from engine.ccm import config
        from engine.ccm.pins import SessionPins, parse
        from engine.ccm.store import Store

        settings = config.load()
        directives = parse(ctx.event.prompt, self.directive)
        session = ctx.event.session
        if not directives or not session:
            return []
        from engine.ccm.origin import project_of

        pins = SessionPins(Store(settings, log=ctx.log), session)
        done = pins.apply(directives, settings["pins"]["default_level"], project_of(ctx.cwd))
        return [Part(self.name, user_message="ccm: " + "; ".join(done))] if done else []
