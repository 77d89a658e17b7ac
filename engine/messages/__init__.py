"""Message-list compression: chat messages in, fewer characters out, with
every original kept in a verbatim store so that restore gives back the input
exactly.  The rule order, the detectors and the markers are YAML
(pipelines/messages/); engine/messages holds only the step and detector kinds.

    from engine.messages import compress_messages, restore_messages
    result = compress_messages(messages)            # or pipeline="path.yaml"
    result["messages"], result["verbatim"], result["stats"]
    restore_messages(result["messages"], result["verbatim"]) == messages
"""

from .api import compress_messages, restore_messages

__all__ = ["compress_messages", "restore_messages"]
