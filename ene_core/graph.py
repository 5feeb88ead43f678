"""The Evidence Necessity Graph (ENG): a versioned, lossless JSON artifact.

Nodes are the answer's claims and the retrieved contexts; a necessity edge ``claim -> context``
exists iff removing the context makes the claim unsupported (``claim.necessary``).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticSerializationError

from .errors import ENGFormatError, ENGVersionError
from .text.normalise import MAX_DEPTH, decode_json, json_problem

# 1.1: Claim.contradicted_by (1.0 ENGs load with it empty)
# 1.2: RunStats.compute_ms (older ENGs load with it None)
# 1.3: citation checking (Claim.citation_supported / citations_unneeded / citations_missing,
#      ENG.citation_recall / citation_precision / citation_base; older ENGs load with them unset)
# 1.4: Claim.premise_contexts / p_entail_alone (older ENGs load with them None)
# 1.5: short answers (Claim.hypothesis, ClaimKind "fragment"; older ENGs load with it None)
# 1.6: amounts the evidence does not state (Claim.unstated_amounts, Verifier.check_amounts;
#      older ENGs load with them empty / None)
# 1.7: comparisons settled by arithmetic and bindings (Claim.arithmetic / other_holder,
#      Verifier.check_bindings; older ENGs load with them None)
# 1.8: value lists (Claim.other_value; older ENGs load with it None)
# 1.9: claims supported alone (Claim.supported_alone_by; older ENGs load with it empty)
# 1.10: RunStats.focus_pairs (premises also read as their leading sentences)
# 1.11: amounts the evidence computes (Claim.computed_amounts; older ENGs load with it empty)
# 1.12: verifiers users bring (Claim.decided_by / judge_read, RunStats.verifier_tokens,
#       Verifier.profile; older ENGs load with them None / 0); RunStats.forward_pairs counts
#       every row the model read, second readings included; short answers: Claim.hypothesis_form,
#       RunStats.unchecked_sentences (older ENGs load with them None / 0); the rules that applied,
#       one flag each (Verifier.check_arithmetic / masking / polarity / scope / culprits beside
#       check_amounts / check_bindings; older ENGs load with them None)
# 1.13: chunks a filter dropped before generation (ENG.filtered_contexts / chunk_filter,
#       Counts.contexts_filtered / tokens_filtered; older ENGs load with them empty / None / 0)
SCHEMA_VERSION = "1.13"

Status = Literal["supported", "contradicted", "unsupported"]
Classification = Literal["unsupported", "contradicted", "fragile", "joint", "robust"]
ClaimKind = Literal["claim", "question", "refusal", "heading", "citation", "filler", "fragment"]


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Claim(_Model):
    """One sentence of the answer. Non-claims (``kind != "claim"``) are kept but not verified."""

    index: int
    text: str = Field(description="Claim text with citation markers and list bullets removed.")
    span: tuple[int, int] = Field(description="[start, end) character offsets into the answer.")
    kind: ClaimKind = Field(
        default="claim",
        description=(
            "'claim' is checked; the rest are not. 'fragment' (added in 1.5): a short answer "
            "that is not a statement on its own, left unchecked because the request had no "
            "question to read it against; since 1.12 only what cannot be a claim alone (a bare "
            "name, a number, yes/no): any other short segment is checked as its own text."
        ),
    )
    hypothesis: str | None = Field(
        default=None,
        description=(
            "What the verifier read when it is not the text: a short answer ('Delhi') checked "
            "as the answer to the question, as a sentence built from both. Added in schema 1.5."
        ),
    )
    hypothesis_form: Literal["declarative", "question_answer"] | None = Field(
        default=None,
        description=(
            "How the hypothesis was made: 'declarative', one sentence written from the question "
            "and the answer ('X was born in Delhi.'), or 'question_answer', the question "
            "followed by the answer ('Where was X born? Delhi.'), used where no rewrite applies. "
            "Null when the verifier read the text. Added in schema 1.12."
        ),
    )
    cited: list[int] = Field(default_factory=list, description="Inline citation numbers, e.g. [2].")
    citation_supported: bool | None = Field(
        default=None,
        description=(
            "The cited chunks together entail the claim (ALCE citation recall); false for a "
            "claim with no citation, null for non-claims and in answers without citation "
            "markers. Added in schema 1.3."
        ),
    )
    citations_unneeded: list[int] = Field(
        default_factory=list,
        description=(
            "Markers, as written, that are not precise (ALCE): the chunk alone does not entail "
            "the claim and the other citations do without it, or the cited set does not entail "
            "it, or the marker names no chunk. Added in schema 1.3."
        ),
    )
    citations_missing: list[int] = Field(
        default_factory=list,
        description=(
            "Markers of the claim's necessary chunks that it does not cite. Added in schema 1.3."
        ),
    )
    status: Status | None = None
    classification: Classification | None = None
    p_entail: float | None = None
    p_contra: float | None = None
    necessary: list[int] = Field(
        default_factory=list, description="Indices of contexts whose removal unsupports the claim."
    )
    contradicted_by: list[int] = Field(
        default_factory=list,
        description=(
            "Contradicted claims: indices of the contexts that contradict it on their own (since "
            "1.6 a contradiction needs one), or that state the amount the evidence gives in place "
            "of the claim's. Added in schema 1.1."
        ),
    )
    p_entail_without: list[float] | None = Field(
        default=None, description="Entailment with each context left out (supported claims only)."
    )
    support_row: list[float] | None = Field(
        default=None, description="Single-context entailment per context (support-matrix flag)."
    )
    uncertainty: float | None = Field(
        default=None, description="U(c) = 1 - mean single-context entailment (support-matrix flag)."
    )
    premise_truncated: bool = False
    premise_contexts: list[int] | None = Field(
        default=None,
        description=(
            "Checkable claims: indices of the contexts whose sentences fed the claim's premise "
            "(what the verifier read for its verdict). Added in schema 1.4."
        ),
    )
    p_entail_alone: list[float] | None = Field(
        default=None,
        description=(
            "Claims not supported by their packed premise: entailment by each of "
            "premise_contexts alone, in the same order. Added in schema 1.4."
        ),
    )
    unstated_amounts: list[str] = Field(
        default_factory=list,
        description=(
            "Amounts, years, clock times and temperatures of the claim, as written, that its "
            "premise states nowhere (in no unit or wording): such a claim is never supported, "
            "and is contradicted (by the contexts in contradicted_by) when the evidence "
            "supports it with another amount of that kind. Added in schema 1.6."
        ),
    )
    computed_amounts: list[str] = Field(
        default_factory=list,
        description=(
            "Amounts of the claim, as written, that its premise writes nowhere but computes from "
            "amounts it states (a sum, difference, product, share or duration): the verifier "
            "read the claim with them written 'some ...' (unless the claim says the difference "
            "is more or less than something), and never calls it contradicted for them. Added "
            "in schema 1.11."
        ),
    )
    arithmetic: str | None = Field(
        default=None,
        description=(
            "A comparison or difference of the claim that the evidence's amounts settle, as "
            "worked out ('8,849 metres - 8,611 metres = 238 metres taller'): the claim's verdict "
            "is the arithmetic's, not the model's. Added in schema 1.7."
        ),
    )
    other_holder: str | None = Field(
        default=None,
        description=(
            "Who the evidence gives the claim's unique role to ('the first person to walk on "
            "the Moon'), as it writes them, when that is not the claim's subject: the claim is "
            "contradicted by that context. Added in schema 1.7."
        ),
    )
    other_value: str | None = Field(
        default=None,
        description=(
            "Contradicted claims whose amount an evidence sentence gives to something else: the "
            "amount that sentence gives to what the claim describes, as written ('40 euros' for "
            "'Dinner is reimbursed up to 25 euros' against '25 euros for lunch and 40 euros for "
            "dinner'). Added in schema 1.8."
        ),
    )
    supported_alone_by: list[int] = Field(
        default_factory=list,
        description=(
            "Supported claims that their packed premise contradicted with no context to blame "
            "(none contradicts them alone in a sentence about what they say): the contexts that "
            "support the claim read alone (p_entail_alone), on which its verdict and necessity "
            "rest. Added in schema 1.9."
        ),
    )
    decided_by: str | None = Field(
        default=None,
        description=(
            "Where the engine's verifier is a cascade: the verifier that scored the claim "
            "against its premise (p_entail, p_contra): the first, or the one the pair went on "
            "to. Added in 1.12."
        ),
    )
    judge_read: Literal["logprobs", "text", "unreadable"] | None = Field(
        default=None,
        description=(
            "Where an LLM judge scored the claim: 'logprobs' (p from its first token's top log "
            "probabilities), 'text' (its server gave none: p is 1 or 0 from the answer's "
            "word), 'unreadable' (no Yes / No in its answer: unsupported). Added in 1.12."
        ),
    )

    @property
    def checkable(self) -> bool:
        return self.kind == "claim"


SOURCE_KEY = "ene_source"  # context metadata: the request id of the inner answer a chunk carries


class ContextNode(_Model):
    index: int
    id: str
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    tokens: int = Field(description="Length in the verifier's tokens (words without a tokenizer).")
    used: bool = Field(description="In the minimal sufficient set: keep it when pruning.")
    necessary_for: list[int] = Field(default_factory=list, description="Claims that need it.")
    necessity_score: float = Field(
        description="Nec(d) = max(0, dy_del(d)) / sum_d' max(0, dy_del(d')), dy = entailment drop."
    )


class FilteredContext(_Model):
    """A retrieved chunk a chunk filter dropped before generation: the answering model never
    read it, so it is not one of the ENG's contexts (nor unused, nor evaluated)."""

    index: int = Field(description="Its position in the input of the filter call that dropped it.")
    call: int = Field(
        default=0, description="Which of the request's filter calls dropped it (0: the first)."
    )
    id: str | None = Field(default=None, description="Its id, when the filter's input had one.")
    text: str
    score: float | None = Field(
        default=None, description="The filter's score of it (how likely the answer needs it)."
    )


class ChunkFilterRecord(_Model):
    """What the chunk filter(s) of a request did before generation (all its calls together)."""

    model: str | None = None
    revision: str | None = None
    threshold: float | None = Field(default=None, description="The last call's keep threshold.")
    calls: int = Field(default=1, description="Filter calls recorded for the request.")
    chunks: int = Field(description="Chunks the filter was given.")
    kept: int = Field(description="Chunks it kept (what the answering model could read).")
    dropped: int = Field(description="Chunks it dropped.")
    tokens_kept: int = Field(default=0, description="The kept chunks' tokens (filter tokenizer).")
    tokens_saved: int = Field(
        default=0, description="The dropped chunks' tokens: what the generator did not read."
    )
    errors: list[str] = Field(
        default_factory=list,
        description=(
            "Why a call kept every chunk (the filter failed open), or why its record could not "
            "be read."
        ),
    )


class Verifier(_Model):
    model: str
    revision: str | None = None
    threshold: float
    contradiction_threshold: float | None = None  # 1.1; None: the same as ``threshold``
    packing: dict[str, Any] = Field(default_factory=dict)
    check_amounts: bool | None = None  # 1.6; None: an older ENG
    check_bindings: bool | None = None  # 1.7; None: an older ENG
    # 1.12: the other rules (verifiers.protocol.RULES); None: an older ENG
    check_arithmetic: bool | None = None
    check_masking: bool | None = None
    check_polarity: bool | None = None
    check_scope: bool | None = None
    check_culprits: bool | None = None
    profile: dict[str, Any] | None = Field(
        default=None,
        description=(
            "The calibration profile the thresholds came from (ene calibrate): its version, "
            "digest, verifier and thresholds. Added in 1.12."
        ),
    )


class Counts(_Model):
    claims: int
    checkable_claims: int
    supported: int
    contradicted: int
    unsupported: int
    fragile: int
    joint: int
    robust: int
    contexts: int
    contexts_used: int
    contexts_unused: int
    tokens_kept: int
    tokens_saved: int
    contexts_filtered: int = Field(
        default=0,
        description=(
            "Chunks a filter dropped before generation (filtered_contexts). Added in 1.13."
        ),
    )
    tokens_filtered: int = Field(
        default=0,
        description=(
            "The tokens of the chunks a filter dropped before generation (the filter's "
            "tokenizer): the generator never read them. Added in 1.13."
        ),
    )


class RunStats(_Model):
    """How the graph was computed. Varies with cache state and timing, never with verdicts."""

    oracle_checks: int = Field(description="Logical (claim, premise) checks the semantics needed.")
    forward_pairs: int = Field(
        description=(
            "Rows the model read for this request: every pair it sent, and the second reading "
            "of each premise read again as its leading sentences (focus_pairs). Before 1.12 the "
            "second readings were not counted."
        )
    )
    cache_hits: int = Field(
        description="Checks whose first reading was answered by the cache or an identical premise."
    )
    empty_premises: int = Field(description="Checks with no evidence left (no model call).")
    focus_pairs: int = Field(
        default=0,
        description=(
            "Of the forward pairs, the second readings: a premise with a focus read whole "
            "after its leading sentences did not settle the verdict (before ENE 0.x of issue "
            "56: a premise also read as its leading sentences). Added in 1.10; counted in "
            "forward_pairs since 1.12."
        ),
    )
    truncated_premises: int = 0
    unchecked_sentences: int = Field(
        default=0,
        description=(
            "Sentences of the answer left unchecked because they cannot be a claim without a "
            "question (kind 'fragment': a bare name, a number, yes/no); the warnings name them. "
            "Added in 1.12."
        ),
    )
    verifier_tokens: int = Field(
        default=0,
        description=(
            "Tokens an API verifier (an LLM judge) spent on this request's pairs sent now "
            "(0 for local models, cache hits and older ENGs). Added in 1.12."
        ),
    )
    duration_ms: float = Field(
        default=0.0,
        description=(
            "Wall time from the start of the engine batch that evaluated this request to its "
            "graph: requests evaluated together share most of it (latency, not cost)."
        ),
    )
    compute_ms: float | None = Field(
        default=None,
        description=(
            "This request's own share of the evaluation time: its own steps, plus its share of "
            "each batched model call in proportion to the text of the pairs it sent (cache hits "
            "cost nothing). Over a batch the shares add up to the batch's time. Added in 1.2."
        ),
    )

    @property
    def request_ms(self) -> float:
        """``compute_ms``, or ``duration_ms`` for a graph older than schema 1.2."""
        return self.compute_ms if self.compute_ms is not None else self.duration_ms


class EvidenceNecessityGraph(_Model):
    schema_version: str = SCHEMA_VERSION
    id: str | None = None
    question: str | None = None
    answer: str
    claims: list[Claim]
    contexts: list[ContextNode]
    minimal_sufficient_set: list[int] = Field(
        description="Contexts that together support every supported claim (pruning keeps these)."
    )
    citation_recall: float | None = Field(
        default=None,
        description=(
            "ALCE citation recall: the share of checkable claims whose cited chunks entail them; "
            "null iff the answer has no citation markers. Added in schema 1.3."
        ),
    )
    citation_precision: float | None = Field(
        default=None,
        description=(
            "ALCE citation precision: the share of the checkable claims' citations that are "
            "precise; null iff the answer has no citation markers. Added in schema 1.3."
        ),
    )
    citation_base: int | None = Field(
        default=None,
        description=(
            "How markers number the chunks: 1 if [1] is contexts[0], 0 if [0] is; null when "
            "citations were not checked. Added in schema 1.3."
        ),
    )
    verifier: Verifier
    counts: Counts
    stats: RunStats
    warnings: list[str] = Field(default_factory=list)
    filtered_contexts: list[FilteredContext] = Field(
        default_factory=list,
        description=(
            "Chunks a filter dropped before generation: the answering model never saw them, so "
            "they are not contexts, never unused and never evaluated. Added in schema 1.13."
        ),
    )
    chunk_filter: ChunkFilterRecord | None = Field(
        default=None,
        description=(
            "What the chunk filter did before generation (null when none ran). Added in 1.13."
        ),
    )

    # -- views -----------------------------------------------------------------------------
    @property
    def edges(self) -> list[tuple[int, int]]:
        """Necessity edges as ``(claim index, context index)`` pairs."""
        return [(c.index, j) for c in self.claims for j in c.necessary]

    @property
    def unsupported_claims(self) -> list[Claim]:
        return [c for c in self.claims if c.status in ("unsupported", "contradicted")]

    @property
    def fragile_claims(self) -> list[Claim]:
        return [c for c in self.claims if c.classification == "fragile"]

    @property
    def unused_contexts(self) -> list[ContextNode]:
        return [c for c in self.contexts if not c.used]

    def verdicts(self) -> dict[str, Any]:
        """Everything but ``stats``: equal for equal inputs and model (the determinism contract)."""
        return self.model_dump(mode="json", exclude={"stats"})

    # -- serialisation ----------------------------------------------------------------------
    def to_json(self, *, indent: int | None = None) -> str:
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes) -> EvidenceNecessityGraph:
        """Parse an ENG; raises :class:`ENGFormatError` / :class:`ENGVersionError` saying why."""
        try:
            data = decode_json(text, None)
        except ValueError as exc:  # not JSON, not text, nested too deeply
            raise ENGFormatError(f"not ENG JSON: {exc}") from None
        return cls._from_data(data, everything=not _surrogate_free(text))

    @classmethod
    def from_dict(cls, data: Any) -> EvidenceNecessityGraph:
        """Validate decoded ENG JSON; raises :class:`ENGFormatError` / :class:`ENGVersionError`
        saying why (also for values that would not serialise, or not read back the same: lone
        surrogates, non-finite numbers, metadata nested too deeply)."""
        return cls._from_data(data, everything=True)

    @classmethod
    def _from_data(cls, data: Any, *, everything: bool) -> EvidenceNecessityGraph:
        """``everything``: check that every string serialises, not only the free-form values
        (metadata, packing); JSON text without surrogates needs no more."""
        if not isinstance(data, dict):
            raise ENGFormatError(f"an ENG is a JSON object, got {type(data).__name__}")
        version = data.get("schema_version")
        major = version.split(".")[0] if isinstance(version, str) else ""
        if not (major.isascii() and major.isdigit()):
            raise ENGFormatError(f"missing or invalid 'schema_version': {version!r}")
        if int(major) > int(SCHEMA_VERSION.split(".")[0]):
            raise ENGVersionError(
                f"ENG schema {version} is newer than this ENE reads ({SCHEMA_VERSION}): "
                "upgrade ene to load it"
            )
        try:
            eng = cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
                for err in exc.errors()[:5]
            )
            raise ENGFormatError(
                f"invalid ENG ({exc.error_count()} problems): {problems}"
            ) from None
        problem = _unsound(eng, everything)
        if problem is not None:  # it would not serialise, or not read back the same
            raise ENGFormatError(f"invalid ENG: {problem}")
        return eng

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        schema = cls.model_json_schema()
        schema["$id"] = f"https://ene.dev/schema/eng-{SCHEMA_VERSION}.json"
        return schema


def _surrogate_free(text: str | bytes) -> bool:
    """JSON text that cannot hold a surrogate: none written raw, none escaped (cheap)."""
    if not isinstance(text, str) or _SURROGATE_ESCAPE.search(text):
        return False
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _unsound(eng: EvidenceNecessityGraph, everything: bool) -> str | None:
    """Why ``eng`` would not serialise or read back the same, or ``None``."""
    free = [("verifier.packing", eng.verifier.packing), ("verifier.profile", eng.verifier.profile)]
    free += [(f"contexts.{c.index}.metadata", c.metadata) for c in eng.contexts]
    for where, value in free:
        problem = json_problem(value, MAX_DEPTH)
        if problem is not None:
            return f"{where}: {problem}"
    if everything:
        try:
            eng.to_json()
        except PydanticSerializationError:
            return "it holds a lone surrogate (not valid Unicode)"
    return None
