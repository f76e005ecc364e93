"""The technique policy's hedge: the first choice searched to its end, the runner-up
scouted for a share of its search and continued only when it leads at equal progress.
Replayed on the recording of heat3d at 16x4x4 (PoCL), so every outcome is checked
against the same technique's complete search."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pytest

from gtune.device import DeviceLimits
from gtune.kernel import TunableKernel
from gtune.loadpredict.dataset import Dataset, TrainingRow
from gtune.loadpredict.features import traits_of
from gtune.loadpredict.models import ModelCard, device_card
from gtune.loadpredict.policy import choose_techniques
from gtune.tuning import TuningSession
from gtune.tuning.driver import run_tuning
from gtune.tuning.techniques import SCOUT_MIN, FixedTechniquePolicy, TechniqueChoice
from tests.heuristics.conftest import Recorded


@dataclass(frozen=True)
class Hedged:
    """A policy that searches ``first`` and scouts ``scout``."""

    first: str
    scout: str
    share: float
    name: str = "auto"
    length: float | None = None  # the scout's search length over the first choice's
    least: int = 1  # the fewest configurations scouted (gtune run: SCOUT_MIN)

    def choose(self, kernel: TunableKernel, device: DeviceLimits | None) -> TechniqueChoice:
        return TechniqueChoice(
            (self.first,),
            scout=self.scout,
            scout_share=self.share,
            scout_length=self.length,
            scout_min=self.least,
        )


def _session(recorded: Recorded) -> TuningSession:
    device = DeviceLimits.from_dict(recorded.data["device"])
    return TuningSession(
        recorded.kernel,
        device,
        space=recorded.space(),
        evaluator_factory=lambda kernel, dev: recorded.replay(),
    )


def _complete(recorded: Recorded, technique: str) -> list[float]:
    """The technique's complete search: each measured configuration's objective, in order."""
    session = _session(recorded)
    try:
        report = run_tuning(session, technique=FixedTechniquePolicy(technique))
    finally:
        session.close()
    (run,) = report.runs
    assert run.outcome is not None and run.outcome.stop_reason == "search finished"
    return [
        e.result.objective if e.result.ok else math.inf
        for e in run.outcome.trace
        if e.result.status.value != "pruned"
    ]


@pytest.mark.parametrize(("first", "scout"), [("global", "local"), ("local", "global")])
@pytest.mark.parametrize("share", [0.1, 0.5])
def test_the_runner_up_continues_only_when_it_leads_at_equal_progress(
    recorded: Recorded, first: str, scout: str, share: float
) -> None:
    a, b = _complete(recorded, first), _complete(recorded, scout)
    session = _session(recorded)
    try:
        report = run_tuning(session, technique=Hedged(first, scout, share))
    finally:
        session.close()
    runs = {r.technique: r for r in report.runs}
    assert set(runs) == {first, scout}
    ka = max(1, round(share * len(a)))
    kb_run = runs[scout].outcome
    assert kb_run is not None
    note = next(n for n in report.notes if n.startswith(f"scouted {scout}"))
    # the scout's share is of the configurations its search expects to measure
    kb = int(note.split(" for ")[1].split()[0])
    assert 1 <= kb <= len(b)
    leads = min(b[:kb]) < min(a[:ka])
    assert ("led" in note and "did not lead" not in note) == leads
    if leads:  # searched to its end: the report's best is the better of both
        assert kb_run.stop_reason == "search finished"
        assert report.search_s == pytest.approx(min(min(a), min(b)))
    else:  # stopped after its share; the first choice's best stands
        measured = [e for e in kb_run.trace if e.result.status.value != "pruned"]
        assert len(measured) == kb
        assert report.search_s == pytest.approx(min(a))


@pytest.mark.parametrize("share", [0.2, 0.5])
def test_the_scout_share_is_of_the_runner_ups_own_search(recorded: Recorded, share: float) -> None:
    """Told how long the runner-up's search is against the first choice's (the model's
    data), the scout measures that share of its own search, not of the first
    choice's; and the note says where the length came from."""
    a, b = _complete(recorded, "local"), _complete(recorded, "global")
    ratio = len(b) / len(a)
    for length, kb in ((ratio, round(share * len(b))), (None, round(share * len(a)))):
        session = _session(recorded)
        try:
            report = run_tuning(session, technique=Hedged("local", "global", share, length=length))
        finally:
            session.close()
        note = next(n for n in report.notes if n.startswith("scouted global"))
        assert int(note.split(" for ")[1].split()[0]) == min(max(1, kb), len(b))
        said = "as in the model's data" if length is not None else "taken as long as local's"
        assert said in note


@pytest.mark.parametrize("share", [0.1, 0.5])
def test_the_scout_measures_at_least_its_floor(recorded: Recorded, share: float) -> None:
    """However small its share, the runner-up is scouted for at least ``scout_min``
    configurations (gtune run: SCOUT_MIN); where that is its whole search, the scout is
    the search: nothing is continued, and the better of both is the result."""
    a, b = _complete(recorded, "local"), _complete(recorded, "global")
    least = len(b) // 2 + 1
    for floor, want in ((least, max(least, round(share * len(b)))), (len(b) + 5, len(b))):
        session = _session(recorded)
        try:
            policy = Hedged("local", "global", share, length=len(b) / len(a), least=floor)
            report = run_tuning(session, technique=policy)
        finally:
            session.close()
        note = next(n for n in report.notes if n.startswith("scouted global"))
        assert int(note.split(" for ")[1].split()[0]) == want
        assert (f"at least {floor}" in note) == (round(share * len(b)) < floor)
        assert ("the whole search" in note) == (want == len(b))
        if want == len(b):
            assert "was searched to its end" not in note
            assert report.search_s == pytest.approx(min(min(a), min(b)))
    assert TechniqueChoice(("vec",)).scout_min == SCOUT_MIN


def test_no_scouting_under_a_budget(replay_session: TuningSession) -> None:
    from gtune.budget import Budget

    report = run_tuning(replay_session, technique=Hedged("global", "local", 0.2), budget=None)
    assert any(n.startswith("scouted local") for n in report.notes)

    report = run_tuning(
        replay_session, technique=Hedged("global", "local", 0.2), budget=Budget(evaluations=12)
    )
    assert [r.technique for r in report.runs] == ["global"]
    assert any("not scouting local" in n for n in report.notes)


def _card(
    tmp_path: Path, recorded: Recorded, labels: list[str], share: float, name: str = "m"
) -> ModelCard:
    """A model trained on copies of the recorded kernel labelled ``labels``, with times
    that put ``local`` closest to each winner."""
    device = DeviceLimits.from_dict(recorded.data["device"])
    traits = traits_of(recorded.kernel)
    rows = []
    for i, label in enumerate(labels):
        times = {"global": 3.0, "vec": 3.0, "local": 2.0, "image": 4.0}
        times[label] = 1.0
        rows.append(TrainingRow(f"k{i}", device.identity, "hybrid", traits, times))
    Dataset(rows).write_csv(tmp_path / f"{name}.csv")
    card = ModelCard(
        name=name,
        heuristic="hybrid",
        device=device_card(device),
        dataset=f"{name}.csv",
        scout_share=share,
        labels={"search": "complete"},
    )
    card.write(tmp_path)
    return card


def test_the_policy_scouts_the_runner_up(tmp_path: Path, recorded: Recorded) -> None:
    device = DeviceLimits.from_dict(recorded.data["device"])
    card = _card(tmp_path, recorded, ["vec", "vec", "global"], 0.2)
    choice = choose_techniques(recorded.kernel, device, "hybrid", card=card)
    assert choice.techniques == ["vec"] and choice.scout == "global"
    assert choice.scout_share == 0.2 and "scouting the runner-up, global" in choice.note
    # one class only: the runner-up is the technique whose times came closest
    card = _card(tmp_path, recorded, ["vec", "vec"], 0.2, name="one-class")
    choice = choose_techniques(recorded.kernel, device, "hybrid", card=card)
    assert choice.techniques == ["vec"] and choice.scout == "local"
    # a card that does not scout keeps the two-techniques-when-unsure policy
    card = _card(tmp_path, recorded, ["vec", "global"], 0.0, name="no-scout")
    choice = choose_techniques(recorded.kernel, device, "hybrid", card=card)
    assert choice.scout is None and len(choice.techniques) == 2


def test_the_model_knows_each_techniques_search_length(tmp_path: Path, recorded: Recorded) -> None:
    """A model whose rows record how many configurations each technique's complete
    search measured gives the runner-up's length over the first choice's: the median
    over the training kernels that searched both."""
    card = _card(tmp_path, recorded, ["vec", "vec", "global"], 0.2)
    rows = [
        TrainingRow(r.kernel, r.device, r.heuristic, r.traits, r.times, None, configs)
        for r, configs in zip(
            Dataset.read_csv(tmp_path / "m.csv").rows,
            [{"vec": 800, "global": 200}, {"vec": 400, "global": 120}, {"vec": 100}],
            strict=True,
        )
    ]
    Dataset(rows).write_csv(tmp_path / "m.csv")
    device = DeviceLimits.from_dict(recorded.data["device"])
    choice = choose_techniques(recorded.kernel, device, "hybrid", card=ModelCard.read(card.path))
    assert choice.techniques == ["vec"] and choice.scout == "global"
    assert choice.scout_length == pytest.approx((0.25 + 0.3) / 2)
    # a dataset without lengths leaves it unknown
    _card(tmp_path, recorded, ["vec", "vec", "global"], 0.2, name="bare")
    bare = ModelCard.read(tmp_path / "bare.model.json")
    assert choose_techniques(recorded.kernel, device, "hybrid", card=bare).scout_length is None


def test_cards_say_how_their_labels_were_searched(tmp_path: Path, recorded: Recorded) -> None:
    card = _card(tmp_path, recorded, ["vec"], 0.2)
    read = ModelCard.read(tmp_path / "m.model.json")
    assert read.labels == {"search": "complete"} and not read.cut_short()
    assert read.scout_share == 0.2
    # an older card records nothing: searches that all stopped by 100 configurations
    # per technique are called cut short
    rows = [
        TrainingRow(
            r.kernel, r.device, r.heuristic, r.traits, r.times, None, {t: 100 for t in r.times}
        )
        for r in Dataset.read_csv(tmp_path / "m.csv").rows
    ]
    Dataset(rows).write_csv(tmp_path / "m.csv")
    card.labels = {}
    card.write(tmp_path)
    old = ModelCard.read(tmp_path / "m.model.json")
    assert old.cut_short() and "cut short" in old.label_search()
