"""ccm_pin (UserPromptSubmit): `ccm:pin last|next|start|end` directives in a
prompt, or typed as one of the engine's slash commands (`/pin-last REASON`:
the agent sends the hook what was typed), pin cached outputs; the user is
told what was done."""

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
        # no settings read for a prompt without a directive or a slash command: the quiet path stays as it was
        prompt, typed = ctx.event.prompt, _typed(ctx.agent)
        return self.directive in prompt or (typed is not None and prompt.lstrip().startswith(typed["prefix"]))

    def parts(self, ctx):
        from engine.ccm import config
        from engine.ccm.pins import SessionPins, expand_command, parse
        from engine.ccm.store import Store

        settings = config.load()
        prompt, typed = ctx.event.prompt, _typed(ctx.agent)
        if typed is not None:
            prompt = expand_command(prompt, settings["pins"]["slash_commands"], typed)
        directives = parse(prompt, self.directive)
        session = ctx.event.session
        if not directives or not session:
            return []
        from engine.ccm.origin import project_of

        pins = SessionPins(Store(settings, log=ctx.log), session)
        done = pins.apply(directives, settings["pins"]["default_level"], project_of(ctx.cwd))
        return [Part(self.name, user_message="ccm: " + "; ".join(done))] if done else []


def _typed(agent):
    """How a slash command typed in this agent reaches its hook (its YAML's
    install.slash_typed), or None: the agent has no slash commands of ours."""
    install = agent.data["install"]
    return install["slash_typed"] if "slash_typed" in install else None
