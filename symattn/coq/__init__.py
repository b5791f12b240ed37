"""Certificates that Coq checks (issue 25): exporter and runner.

:mod:`symattn.coq.export` writes ``.v`` certificates (data, witnesses, one
claim each) against the Coq theory in ``coq/theories``; :mod:`symattn.coq.run`
runs ``coqc`` on them. See the documentation page "What Coq checks".
"""

__all__ = ["Certificate", "spectrum_certificate", "write_project"]


def __getattr__(name: str):
    """The exporter's names, imported on first use (the exporter needs sympy; ``symattn spectrum``
    imports :mod:`symattn.coq.cli` and must not load it without ``--coq``)."""
    if name in __all__:
        from symattn.coq import export

        return getattr(export, name)
    raise AttributeError(f"module 'symattn.coq' has no attribute {name!r}")
