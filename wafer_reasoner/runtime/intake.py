"""Speech taken off the wire in batches, heard a slice at a time, a stop heeded the moment it is taken.

    texts = hear_in_slices(first, take=waiting_transcripts, hear=publish_answers, on_stop=zero_cmd_vel)

``take(limit)`` returns up to ``limit`` transcripts already waiting (never blocks); ``hear(texts)`` numbers
and answers a slice (ReasonerCore.hear_all, then publishing its outputs); ``on_stop()`` stops the base at once.
Hearing an utterance costs tens of microseconds (it gets a record), so a 1,000-utterance burst takes tens of
milliseconds to hear: a stop behind it is heeded as soon as it is taken, not after everything before it is
heard, and what arrives while a slice is heard is taken before the next slice.
"""

from __future__ import annotations

from wafer_reasoner.understanding.stop import holds_a_stop

HEAR_SLICE = 64  # utterances heard between two looks for newly arrived speech
MAX_BATCH = 1024  # utterances heard in one call at most (the rest waits for the next one)


def hear_in_slices(first: list, take, hear, on_stop, *, slice_size: int = HEAR_SLICE,
                   limit: int = MAX_BATCH) -> list:
    """Hears ``first`` and everything ``take`` gives meanwhile, in order, at most ``limit`` in all; returns what
    was heard."""
    texts = _heeded(list(first) + take(limit - len(first)), on_stop)
    heard = 0
    while heard < len(texts):
        hear(texts[heard:heard + slice_size])
        heard = min(heard + slice_size, len(texts))
        texts += _heeded(take(limit - len(texts)), on_stop)
    return texts


def _heeded(texts: list, on_stop) -> list:
    if holds_a_stop(texts):
        on_stop()
    return texts
