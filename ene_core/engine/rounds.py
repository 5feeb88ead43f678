"""The plan of one request (the semantics), in rounds of checks: every claim's baseline support
(with its cited chunks), leave-one-out for the supported claims, who contradicts the contradicted
ones, each cited chunk alone and the cited set without it, the support matrix on request, and
the minimal sufficient set; then the ENG.

Everything works on the contexts in canonical order (by content), so no result depends on the
order they were passed in.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable, Mapping, Sequence
from typing import NamedTuple

from ..rules.amounts import Amount, amounts, same_amount
from ..rules.arithmetic import Derivation, derive
from ..rules.bindings import (
    RoleClash,
    ValueClash,
    other_holder,
    other_subject,
    other_value,
    own_clause,
    reversed_route,
    same_opening,
)
from ..rules.grounding import computed, holding, rivals, substitute, unstated
from ..rules.masking import as_written, difference, masked
from ..rules.polarity import turned
from ..rules.scope import excepted, narrowed
from ..text.citations import Citations, check_base, resolve
from ..text.claims import Segment, read_with_question, split_claims
from ..text.contexts import canonical_order
from ..text.words import word_share
from ..verifiers.protocol import Scores, Verdict
from .assembly import ClaimRounds, GraphAssembly
from .minimal_set import MinimalSet
from .premise import EvidenceIndex, Premise
from .request import ClaimsRequest, Request
from .scoring import Check, Plan, _Tally, tagged

#: the share of a claim's content words that a culprit's sentence must have (the culprits rule);
#: chosen on the dev sets, where no right culprit fell under it (docs/engine.md, "Who contradicts")
CULPRIT_SHARE = 1 / 3


# a clause that draws a consequence from what precedes it: "…, so …", "…, which gives …"
_CONSEQUENCE = re.compile(r",\s*(?:so|which|meaning|making|giving)\b(?! that)", re.IGNORECASE)


class Judged(NamedTuple):
    """One round's scores and the verdicts on them, check by check."""

    scores: list[Scores]
    verdicts: list[Verdict]


class PlanRounds(MinimalSet, GraphAssembly):
    """:meth:`_plan`: yields each round's checks, receives their scores, returns the ENG; a part of
    :class:`~ene_core.engine.necessity.NecessityEngine`."""

    check_citations: bool
    rules: frozenset[str]  # the rules that apply (verifiers.protocol.RULES)
    citation_base: int

    def _plan(self, request: Request, tally: _Tally, tokens: Mapping[str, int]) -> Plan:
        if isinstance(request, ClaimsRequest):
            return self._claims_plan(request)
        return self._answer_plan(request, tally, tokens)

    def _answer_plan(self, request: Request, tally: _Tally, tokens: Mapping[str, int]) -> Plan:
        # Everything below works on the contexts in canonical order (by content), so the
        # premises, tie-breaks and float sums never depend on the order they were passed in;
        # ``_graph`` maps indices back to the user's order.
        order = canonical_order(request.contexts)
        # A fragment ("Delhi") is checked as the answer to the question: the verifier reads
        # its hypothesis (``verifier_text``) everywhere below, premise packing included.
        segments = read_with_question(split_claims(request.answer), request.question)
        n = len(order)
        index = self.packer.index([request.contexts[i].text for i in order])
        claims = [k for k, s in enumerate(segments) if s.checkable]
        # Citations are checked when the answer has markers (anywhere, even on a non-claim).
        checking = self.check_citations and any(s.cited for s in segments)
        found = yield from self._claim_rounds(index, order, segments, claims, checking)
        kept = yield from self._minimal_set(
            index, segments, found.supported, found.necessary, found.single, n, found.held()
        )
        return self._graph(
            request,
            order,
            segments,
            found,
            kept,
            found.citing if checking else None,
            check_base(self.citation_base),
            tally,
            tokens,
        )

    def _claims_plan(self, request: ClaimsRequest) -> Plan:
        """Some sentences of a streamed answer: their claim-level rounds only, no minimal set;
        returns ``{segment index: Claim}``, each claim as the ENG of the whole answer shows it
        (the citation fields of a claim without markers are the whole answer's to decide)."""
        shared = request.shared
        if "index" not in shared:  # once per stream, in the worker
            shared["order"] = canonical_order(request.contexts)
            shared["index"] = self.packer.index([request.contexts[i].text for i in shared["order"]])
        order = shared["order"]
        ks = sorted(request.segments)
        read = read_with_question([request.segments[k] for k in ks], request.question)
        segments = dict(zip(ks, read, strict=True))
        claims = [k for k in ks if segments[k].checkable]
        found = yield from self._claim_rounds(
            shared["index"], order, segments, claims, self.check_citations
        )
        base_number = check_base(self.citation_base)
        return {
            k: self._claim(
                k,
                segments[k],
                order,
                found,
                found.citing if segments[k].cited else None,
                base_number,
            )
            for k in claims
        }

    def _claim_rounds(
        self,
        index: EvidenceIndex,
        order: Sequence[int],
        segments: Mapping[int, Segment] | Sequence[Segment],
        claims: list[int],
        checking: bool,
    ) -> Generator[list[Check], list[Scores], ClaimRounds]:
        """The rounds of each claim on its own (no other claim changes them): baseline support
        with its cited chunks, leave-one-out, who contradicts (a contradiction without a
        culprit is unsupported), each premise context alone for a claim not supported, the
        claim with the evidence's other amounts in place of those its premise does not state,
        the cited chunks alone and without each other, and the support-matrix row."""
        n = len(order)
        everything = range(n)
        base_number = check_base(self.citation_base)
        position = {user: r for r, user in enumerate(order)}
        cites = {
            k: resolve(segments[k].cited, base_number, position)
            for k in (claims if checking else [])
            if segments[k].cited
        }
        cited = [k for k in cites if cites[k].cited]  # citing at least one existing chunk

        def check(k: int, keep: Iterable[int] | None) -> Check:
            claim = segments[k].verifier_text
            premise = index.premise(claim, None if keep is None else set(keep))
            return premise, self._hypothesis(claim, premise)

        # Citations ride along: the cited set with the baseline, each cited chunk alone and
        # the set without it with leave-one-out (only for a set of two or more that entails).
        asked = tagged(
            ("baseline", [check(k, None) for k in claims]),
            ("cited set", [check(k, cites[k].cited) for k in cited]),
        )
        judged = self._judge_all(asked, (yield asked))
        baseline = dict(zip(claims, judged.scores, strict=False))
        verdicts = dict(zip(claims, judged.verdicts, strict=False))
        entailed = {
            k: v == "supported" for k, v in zip(cited, judged.verdicts[len(claims) :], strict=True)
        }
        several = [k for k in cited if entailed[k] and len(cites[k].cited) > 1]
        supported = [k for k in claims if verdicts[k] == "supported"]
        contradicted = [k for k in claims if verdicts[k] == "contradicted"]
        unsure = [k for k in claims if verdicts[k] == "unsupported"]
        own = dict(zip(claims, asked, strict=False))  # each claim's baseline check
        # The contexts that fed each claim's premise; suspects of a contradiction are those of
        # the premise that contradicted it. A claim not supported gets each of them alone.
        premised = {k: sorted(own[k][0].contexts) for k in claims}
        # the rules and amount checks read the claim as written (the model may read it masked)
        written = {k: (own[k][0], as_written(own[k][1])) for k in claims}
        unstated = {k: self._unstated(written[k]) for k in claims}
        worked = {k: self._computed(written[k]) for k in claims}
        derived = {k: d for k in claims if (d := self._derived(written[k])) is not None}
        clashes = {k: c for k in claims if (c := self._clash(written[k])) is not None}
        misbound = {k: v for k in claims if (v := self._misbound(written[k])) is not None}
        reversals = {k: i for k in claims if (i := self._reversal(written[k])) is not None}
        flips = {k: i for k in claims if (i := self._flip(written[k])) is not None}
        probes = [
            (k, probe, rival)
            for k in unsure
            for probe, rival in self._probes(written[k], unstated[k])
        ]

        loo_checks = [
            check(k, (j for j in everything if j != i)) for k in supported for i in everything
        ]
        alone_checks = [check(k, (i,)) for k in contradicted + unsure for i in premised[k]]
        cite_checks = [
            check(k, keep)
            for k in several
            for i in cites[k].cited
            for keep in ((i,), tuple(j for j in cites[k].cited if j != i))
        ]
        probe_checks = [(index.premise(probe), probe) for _, probe, _ in probes]
        openings = {k: self._openings(own[k]) for k in supported}
        opening_checks = [(p, own[k][1]) for k in supported for p in openings[k]]
        asked = tagged(
            ("leave-one-out", loo_checks),
            ("chunk alone", alone_checks),
            ("cited chunks", cite_checks),
            ("rival amounts", probe_checks),
            ("sentence alone (bindings)", opening_checks),
        )
        both = self._judge_all(asked, (yield asked))
        split = len(loo_checks) + len(alone_checks)
        loo, alone = both.scores[: len(loo_checks)], both.scores[len(loo_checks) : split]
        citing = self._citing(
            cites, entailed, several, both.verdicts[split : split + len(cite_checks)]
        )
        without = {k: loo[s * n : (s + 1) * n] for s, k in enumerate(supported)}
        necessary = {
            k: [i for i in everything if both.verdicts[s * n + i] != "supported"]
            for s, k in enumerate(supported)
        }
        # A contradiction needs a culprit: a context of its premise that contradicts the claim
        # on its own (with the culprits rule, in a sentence about what the claim is about). Where
        # none does, the claim is unsupported, or (with the culprits rule) supported by the
        # contexts that support it alone: the packed premise only juxtaposed other sentences.
        alone_said = dict(
            zip(
                ((k, i) for k in contradicted + unsure for i in premised[k]),
                zip(alone_checks, both.verdicts[len(loo_checks) : split], strict=True),
                strict=True,
            )
        )
        blame = {
            k: [i for i in premised[k] if self._culprit(*alone_said[k, i])] for k in contradicted
        }
        backed: dict[int, list[int]] = {}
        for k in contradicted:
            if k in clashes:  # the context that gives its role to another, and any culprit
                blame[k] = sorted({*blame[k], own[k][0].sources[clashes[k].part][0]})
            elif k in misbound:  # the context that gives its amount to something else
                blame[k] = [own[k][0].sources[misbound[k].part][0]]
            elif k in reversals:  # the context that gives its route the other way round
                blame[k] = sorted({*blame[k], own[k][0].sources[reversals[k]][0]})
            elif k in flips:  # the context that turns its negation or a word, or narrows it
                blame[k] = [own[k][0].sources[flips[k]][0]]
            elif k in derived:  # the contexts of the amounts it compares
                blame[k] = sorted({own[k][0].sources[i][0] for i in derived[k].parts})
            if not blame[k]:
                del blame[k]
                backers = [i for i in premised[k] if alone_said[k, i][1] == "supported"]
                if backers and "culprits" in self.rules:
                    verdicts[k], backed[k] = "supported", backers
                    necessary[k] = backers if len(backers) == 1 else []
                else:
                    verdicts[k] = "unsupported"
        scores_alone = iter(alone)
        by_one = {
            k: [next(scores_alone).entail for _ in premised[k]] for k in contradicted + unsure
        }
        at = split + len(cite_checks)
        opened = at + len(probe_checks)
        swapped = Judged(both.scores[at:opened], both.verdicts[at:opened])
        for k, held in self._amount_contradictions(probes, probe_checks, swapped, baseline):
            verdicts[k], blame[k] = "contradicted", held
        # A supported claim that a sentence opening like it contradicts alone, with none
        # supporting it alone, binds a value to the wrong subject (bindings.same_opening).
        alone_verdicts = iter(both.verdicts[opened:])
        for k in list(supported):
            said = [(p, next(alone_verdicts)) for p in openings[k]]
            against = sorted({p.sources[0][0] for p, v in said if v == "contradicted"})
            if against and all(v != "supported" for _, v in said):
                verdicts[k], blame[k] = "contradicted", against
                supported.remove(k)
                del necessary[k], without[k]

        single: dict[int, list[Scores]] = {}
        wanted = claims if self.support_matrix else []
        if wanted and n:
            flat = yield tagged(
                ("support matrix", [check(k, (i,)) for k in wanted for i in everything])
            )
            single = {k: flat[s * n : (s + 1) * n] for s, k in enumerate(wanted)}
        return ClaimRounds(
            baseline,
            verdicts,
            without,
            necessary,
            blame,
            single,
            citing,
            supported,
            premised,
            by_one,
            {k: [a.surface for a in unstated[k]] for k in claims if unstated[k]},
            {k: [a.surface for a in worked[k]] for k in claims if worked[k]},
            {k: d.working for k, d in derived.items()},
            {k: c.holder for k, c in clashes.items()},
            {k: v.rival.surface for k, v in misbound.items()},
            backed,
        )

    def _judge_all(self, checks: Sequence[Check], scores: Sequence[Scores]) -> Judged:
        return Judged(
            list(scores), [self._judge(c, s) for c, s in zip(checks, scores, strict=True)]
        )

    def _hypothesis(self, claim: str, premise: Premise) -> str:
        """The claim as the model reads it against ``premise``: with the ``masking`` rule, the
        amounts it computes from the premise's written "some ..." (:func:`~ene_core.rules.masking.
        masked`), unless a comparison of the premise's amounts settles it (``derive``)."""
        if "masking" not in self.rules or derive(claim, premise.parts) is not None:
            return claim
        return masked(claim, premise.text)

    def _culprit(self, check: Check, verdict: Verdict) -> bool:
        """Whether a context that contradicts the claim alone (``check``) is its culprit: with
        the ``culprits`` rule, one of its sentences must share at least :data:`CULPRIT_SHARE` of
        the claim's content words ("The Global Bond Fund has an ongoing charge of 0.15 percent
        per year." shares one of four with "The fund holds about 1,500 companies.")."""
        if verdict != "contradicted":
            return False
        premise, claim = check
        return "culprits" not in self.rules or word_share(claim, premise.parts) >= CULPRIT_SHARE

    def _openings(self, check: Check) -> list[Premise]:
        """Each sentence of the check's premise that opens like its claim, and each clause of one
        that gives its predicate to another subject with the clauses about its own subject
        (:func:`~ene_core.rules.bindings.other_subject`), as a premise alone."""
        if "bindings" not in self.rules:
            return []
        premise, claim = check
        parts = [p.strip() for p in premise.parts]
        clauses = [(i, own_clause(parts[i])) for i in same_opening(parts, claim)]
        clauses += [c for c in other_subject(parts, claim) if c not in clauses]
        return [Premise(text, (premise.sources[i],), (text,)) for i, text in clauses]

    def _reversal(self, check: Check) -> int | None:
        return reversed_route(check[1], check[0].parts) if "bindings" in self.rules else None

    def _flip(self, check: Check) -> int | None:
        """The premise part that says the claim with its negation or a word turned
        (:func:`~ene_core.rules.polarity.turned`), narrows its "every"
        (:func:`~ene_core.rules.scope.narrowed`) or excepts what it affirms
        (:func:`~ene_core.rules.scope.excepted`): the ``polarity`` and ``scope`` rules."""
        premise, claim = check
        rules = [turned] if "polarity" in self.rules else []
        rules += [narrowed, excepted] if "scope" in self.rules else []
        for rule in rules:
            found = rule(claim, premise.parts)
            if found is not None:
                return found
        return None

    def _clash(self, check: Check) -> RoleClash | None:
        return other_holder(check[1], check[0].parts) if "bindings" in self.rules else None

    def _misbound(self, check: Check) -> ValueClash | None:
        return other_value(check[1], check[0].parts) if "bindings" in self.rules else None

    def _derived(self, check: Check) -> Derivation | None:
        return derive(check[1], check[0].parts) if "arithmetic" in self.rules else None

    def _unstated(self, check: Check) -> tuple[Amount, ...]:
        return unstated(check[1], check[0].text) if "amounts" in self.rules else ()

    def _computed(self, check: Check) -> tuple[Amount, ...]:
        return computed(check[1], check[0].text) if "amounts" in self.rules else ()

    @staticmethod
    def _probes(check: Check, missing: Sequence[Amount]) -> list[tuple[str, Amount]]:
        """The claim with each amount its premise does not state replaced by each of the
        premise's amounts of that kind (``(claim, the amount put in)``), but by none the claim
        states itself before a consequence ("25 pounds per player ..., so a team of four pays
        100 pounds": its amount is worked out from that one)."""
        premise, claim = check
        own = amounts(claim)
        return [
            (substitute(claim, a, r), r)
            for a in missing
            if not difference(claim, a)  # no amount of the evidence is a difference
            for r in rivals(a, premise.text, claim=claim)
            if not any(
                same_amount(q, r) and _CONSEQUENCE.search(claim, q.end, a.start) for q in own
            )
        ]

    @staticmethod
    def _amount_contradictions(
        probes: Sequence[tuple[int, str, Amount]],
        checks: Sequence[Check],
        judged: Judged,
        baseline: Mapping[int, Scores],
    ) -> list[tuple[int, list[int]]]:
        """The claims the evidence supports with another amount in place of their own, better
        than with their own (on the recipe's real NLI pairs, not the sealed test set, that
        condition calls a fifth fewer entailed pairs contradicted and catches the same
        contradicted ones), or with exactly one of several (the model reads "4.1 percent" and
        "3.45 percent" alike; the bindings tell the fixed rate's from the variable one's), each
        with the contexts that state the first such amount (rivals come among the most of the
        claim's words first: :func:`~ene_core.rules.grounding.rivals`)."""
        tried: dict[int, list[int]] = {}  # claim -> its probes
        for p, (k, _, _) in enumerate(probes):
            tried.setdefault(k, []).append(p)
        best: dict[int, int] = {}  # claim -> its first probe that qualifies
        for k, ps in tried.items():
            fits = [p for p in ps if judged.verdicts[p] == "supported"]
            better = [p for p in fits if judged.scores[p].entail > baseline[k].entail]
            if better or (len(fits) == 1 < len(ps)):
                best[k] = (better or fits)[0]
        out = []
        for k, p in best.items():
            premise, rival = checks[p][0], probes[p][2]
            held = {premise.sources[i][0] for i in holding(premise.parts, rival)}
            out.append((k, sorted(held or premise.contexts)))
        return out

    def _citing(
        self,
        cites: Mapping[int, Citations],
        entailed: Mapping[int, bool],
        several: Sequence[int],
        judged: Sequence[Verdict],
    ) -> dict[int, tuple[bool, list[int]]]:
        """Per claim with markers: whether its cited chunks entail it, and its imprecise
        markers. ``judged``: for each claim of ``several``, each cited chunk alone, then the
        cited set without it."""
        verdicts = iter(v == "supported" for v in judged)
        out = {}
        for k, found in cites.items():
            alone: dict[int, bool] = {}
            rest: dict[int, bool] = {}
            if k in several:
                for i in found.cited:
                    alone[i], rest[i] = next(verdicts), next(verdicts)
            ok = entailed.get(k, False)
            out[k] = (ok, found.unneeded(ok, alone, rest))
        return out
