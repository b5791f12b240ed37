"""Certificates that Coq checks (issue 25): exporter and runner.

:mod:`symattn.coq.export` writes ``.v`` certificates (data, witnesses, one
claim each) against the Coq theory in ``coq/theories``; :mod:`symattn.coq.run`
runs ``coqc`` on them. See the documentation page "What Coq checks".
"""

from symattn.coq.export import Certificate, spectrum_certificate, write_project

__all__ = ["Certificate", "spectrum_certificate", "write_project"]
