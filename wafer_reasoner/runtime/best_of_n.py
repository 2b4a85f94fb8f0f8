"""Best-of-N for the robot: the host decodes the candidates, the emulated deadline decides how many count.

    model = EmulatedBestOfN(planner_model, emulator, deadline_ms=150.0, accept=verifier_accepts(scene, limits, ...),
                            reasoning_tokens=0)
    answer(model, scene, utterance, limits, now_s=...)   # model.last_choice: the DeadlineChoice

The candidates never depend on the emulated hardware (row k is the same whatever N); which of them compete is
``emulator.deadline.choose_within_deadline``: the first n rows whose batch the emulated pair finishes by the
deadline, verified, the best model score kept. A reasoning budget (hidden tokens the target thinks first) is
charged to every candidate before its plan, so it counts against the deadline.

With a best-of-N fast engine the work is done while decoding: the verifier runs on each candidate the step it
finishes, while the others go on, and ``fits`` stops the candidates that can no longer be among the first n (the
batch of the rows before them, each at least one token longer, already misses the deadline), so the host stops
once the rows that can still count are done. The choice is the same as decoding everything: a stopped row is
never among the kept ones.
"""

from __future__ import annotations

from dataclasses import replace

from wafer_reasoner.emulator.deadline import DeadlineChoice, batch_time, choose_within_deadline


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
        self._fit_count, self._fit_prompt = 0, -1  # fits(): the count of the last call, for the same prompt

    def generate(self, scene, utterance: str):
        self._fit_count, self._fit_prompt = 0, -1
        generation = self.model.generate(scene, utterance, **self._engine_hooks())
        texts = generation.candidate_texts
        if not texts:  # one candidate: greedy, nothing to choose
            self.last_choice = choose_within_deadline(self.emulator, generation.prompt_tokens, (generation.tokens,),
                                                      (0.0,), (True,), self.deadline_ms, self.reasoning_tokens)
            return generation
        if generation.candidate_valid:  # verified by the engine as each finished
            valid = [ok and done for ok, done in zip(generation.candidate_valid, generation.candidate_finished)]
        else:
            valid = [done and (self.accept is None or self.accept(text))
                     for text, done in zip(texts, generation.candidate_finished)]
        # a stopped row would have written at least one more token: the same lower bound the engine stopped it on
        lengths = [tokens + stopped for tokens, stopped in
                   zip(generation.candidate_tokens, generation.candidate_stopped or [False] * len(texts))]
        choice = choose_within_deadline(self.emulator, generation.prompt_tokens, lengths,
                                        generation.candidate_scores, valid, self.deadline_ms, self.reasoning_tokens)
        self.last_choice = choice
        row = choice.index
        return replace(generation, text=texts[row], tokens=generation.candidate_tokens[row],
                       score=generation.candidate_scores[row], candidates=choice.candidates)

    def _engine_hooks(self) -> dict:
        """For a best-of-N fast engine: the verifier, run on each candidate as it finishes, and the deadline
        check that stops candidates that can no longer be kept. Other models are called as they are."""
        engine = getattr(self.model, "engine", None)
        if engine is None or engine.config.candidates == 1:
            return {}
        return {"accept": self.accept, "fits": self.fits if self.deadline_ms > 0 else None}

    def fits(self, prompt_tokens: int, lengths, done) -> int:
        """How many leading candidates could still make the deadline: each unfinished one will write at least one
        more token, and a batch only gets slower with more rows and longer plans, so the count never grows. The
        last count is tried first (one emulator call per step, usually)."""
        bounds = tuple(length if finished else length + 1 for length, finished in zip(lengths, done))
        count = min(self._fit_count, len(bounds)) if self._fit_prompt == prompt_tokens else len(bounds)
        while count > 1 and batch_time(self.emulator, prompt_tokens, bounds[:count],
                                       self.reasoning_tokens).emulated_ms > self.deadline_ms:
            count -= 1
        self._fit_count, self._fit_prompt = count, prompt_tokens
        return count
