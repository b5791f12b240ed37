"""The results store: canonical keys, versions kept apart, status, schema; the atlas."""

from __future__ import annotations

import sqlite3

import pytest

from symattn.sweep.atlas import atlas_tables, write_atlas
from symattn.core.errors import SymattnError
from symattn.sweep.store import Store
from symattn.sweep.run import parse_spec, run_sweep


def test_equivalent_architectures_are_one_case():
    spec = parse_spec({"analyses": ["spectrum", "jet"], "grid": [
        {"depth": 2, "width": 2, "rank": 1, "normalizer": "exp"},
        {"depth": 2, "width": 2, "ranks": [[1, 1]], "normalizer": [["2*exp(s)", "exp"]]},
        {"depth": 2, "width": 2, "rank": 2, "normalizer": "exp"}]})
    # jet ignores the query/key widths: one jet case, two spectra (rank 1 and rank 2)
    assert sorted(c.analysis for c in spec.cases) == ["jet", "spectrum", "spectrum"]
    spec = parse_spec({"analyses": ["spectrum", "jet"], "grid": [
        {"depth": 2, "width": 2}, {"analyses": ["jet"], "depth": 3, "width": 2}]})
    assert sorted((c.analysis, c.architecture["depth"]) for c in spec.cases) == [
        ("jet", 2), ("jet", 3), ("spectrum", 2)]


def test_versions_never_mix(tmp_path):
    spec = parse_spec({"analyses": ["jet"], "grid": [{"depth": 1, "width": [1, 2]}]})
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        assert run_sweep(spec, store, workers=0)["computed"] == 2
    with Store(path, version="0.0.0-old") as old:
        assert old.statuses([c.key for c in spec.cases]) == {}
        with pytest.raises(SymattnError, match="reads symattn 0.0.0-old"):
            old.put(spec.cases[0], {}, "0.1.0")
    db = sqlite3.connect(path)
    db.execute("UPDATE results SET version = '0.0.0-old'")
    db.commit()
    db.close()
    with Store(path) as store:
        status = store.status()
        assert status["versions"]["0.0.0-old"]["ok"] == 2
        assert status["versions"][store.version]["missing"] == 2
        summary = run_sweep(spec, store, workers=0)
        assert (summary["computed"], summary["reused"]) == (2, 0)
        assert store.status()["versions"]["0.0.0-old"]["ok"] == 2


def test_schema_and_missing_store_refused(tmp_path):
    with pytest.raises(SymattnError, match="no store"):
        Store(tmp_path / "none.sqlite", create=False)
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not sqlite at all" * 100)
    with pytest.raises(SymattnError, match="not a symattn store"):
        Store(bad)
    damaged = tmp_path / "damaged.sqlite"
    with Store(damaged) as store:
        run_sweep(parse_spec({"analyses": ["jet"], "grid": [{"depth": 1, "width": [1, 2]}]}), store, workers=0)
    data = bytearray(damaged.read_bytes())
    for page in range(4096, len(data), 4096):  # garble the header of every page but the first
        data[page:page + 8] = b"\xff" * 8
    damaged.write_bytes(bytes(data))
    with pytest.raises(SymattnError, match="not a symattn store|is damaged"):
        Store(damaged)
    path = tmp_path / "s.sqlite"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '999' WHERE key = 'schema'")
    db.commit()
    db.close()
    with pytest.raises(SymattnError, match="schema 999"):
        Store(path)


def test_rows_keep_the_full_result_with_provenance(tmp_path):
    spec = parse_spec({"analyses": ["dimension"], "grid": [{"depth": 1, "widths": [[3, 2]], "tokens": 2}]})
    with Store(tmp_path / "s.sqlite") as store:
        run_sweep(spec, store, workers=0)
        (row,) = store.rows()
    prov = row["result"]["provenance"]
    assert prov["kind"] == row["kind"] == "exact"
    assert prov["inputs"]["widths"] == [3, 2] and prov["inputs"]["seed"] == 0
    assert row["result"]["dimension"] == row["result"]["lower_bound"] == row["result"]["upper_bound"]


def test_atlas_marks_agreement_and_writes_every_format(tmp_path):
    spec = parse_spec({"analyses": ["spectrum", "jet", "dimension", "bank"], "options": {"spectrum": {"order": 2}},
                       "grid": [{"depth": [1, 2], "width": 2, "normalizer": ["exp", "cosh"]}]})
    with Store(tmp_path / "s.sqlite") as store:
        run_sweep(spec, store, workers=0)
        tables = atlas_tables(store)
        files = write_atlas(store, tmp_path / "atlas")
    header, rows = tables["jet"]
    assert [r[header.index("check")] for r in rows] == ["="] * 4
    assert sorted(r[header.index("sharp degree")] for r in rows) == [3, 5, 7, 13]
    header, rows = tables["dimension"]
    assert all(r[header.index("check")] == "=" for r in rows)
    # order 2 cannot decide beta >= 2 (cosh: 3, 11; exp depth two: 5): failed rows, listed with their error
    header, rows = tables["failures"]
    assert len(rows) == 3 and all("too short" in r[header.index("error")] for r in rows)
    names = {p.name for p in files}
    assert {"atlas.md", "atlas.html", "jet.csv", "dimension.csv", "jet.png"} <= names
    assert "| sharp degree | Prop. C.1 |" in (tmp_path / "atlas" / "atlas.md").read_text()
    assert "DIFFERS" not in (tmp_path / "atlas" / "jet.csv").read_text()


def test_a_failed_row_is_replaced_whole_by_an_ok_one(tmp_path):
    """Every column of a replaced row is the new row's (the blind mutant that kept the old status survived)."""
    from symattn.sweep.run import parse_spec
    from symattn.sweep.store import Store

    case = parse_spec({"analyses": ["jet"], "grid": [{"depth": 1, "width": [1]}]}).cases[0]
    failed = {"status": "failed", "kind": None, "result": None, "error": "x", "seconds": 0.0, "peak_rss": 0,
              "host": ""}
    ok = {"status": "ok", "kind": "exact", "result": {"degree": 3}, "error": "", "seconds": 1.0, "peak_rss": 0,
          "host": "h"}
    with Store(tmp_path / "s.sqlite") as store:
        store.put(case, failed, store.version)
        assert store.put(case, ok, store.version) is True
        (row,) = store.rows()
        assert (row["status"], row["kind"], row["result"], row["error"]) == ("ok", "exact", {"degree": 3}, "")
