"""Best-of-N for the robot: the host decodes every candidate, the emulated deadline decides how many count.

    model = EmulatedBestOfN(planner_model, emulator, deadline_ms=150.0, accept=verifier_accepts(scene, limits, ...),
                            reasoning_tokens=0)
    answer(model, scene, utterance, limits, now_s=...)   # model.last_choice: the DeadlineChoice

The candidates never depend on the emulated hardware (row k is the same whatever N); which of them compete is
``emulator.deadline.choose_within_deadline``: the first n rows whose batch the emulated pair finishes by the
deadline, verified, the best model score kept. A reasoning budget (hidden tokens the target thinks first) is
charged to every candidate before its plan, so it counts against the deadline.
"""

from __future__ import annotations

from dataclasses import replace

from wafer_reasoner.emulator.deadline import DeadlineChoice, choose_within_deadline


class EmulatedBestOfN:
    """A planner model wrapper for ``query.answer``. ``accept(plan_text) -> bool`` verifies a candidate (the
    verifier, in the core); a candidate that did not reach <eos> is never valid. ``last_choice`` holds the
    latest DeadlineChoice."""

    def __init__(self, model, emulator, *, deadline_ms: float, accept=None, reasoning_tokens: int = 0):
        self.model = model
        self.emulator = emulator
        self.deadline_ms = float(deadline_ms)
        self.accept = accept
        self.reasoning_tokens = reasoning_tokens
        self.last_choice: DeadlineChoice | None = None

    def generate(self, scene, utterance: str):
        generation = self.model.generate(scene, utterance)
        texts = generation.candidate_texts
        if not texts:  # one candidate: greedy, nothing to choose
            self.last_choice = choose_within_deadline(self.emulator, generation.prompt_tokens, (generation.tokens,),
                                                      (0.0,), (True,), self.deadline_ms, self.reasoning_tokens)
            return generation
        valid = [done and (self.accept is None or self.accept(text))
                 for text, done in zip(texts, generation.candidate_finished)]
        choice = choose_within_deadline(self.emulator, generation.prompt_tokens, generation.candidate_tokens,
                                        generation.candidate_scores, valid, self.deadline_ms, self.reasoning_tokens)
        self.last_choice = choice
        row = choice.index
        return replace(generation, text=texts[row], tokens=generation.candidate_tokens[row],
                       score=generation.candidate_scores[row], candidates=choice.candidates)
