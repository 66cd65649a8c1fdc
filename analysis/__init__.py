"""carrier analysis: sweep CSVs and bench tables -> deterministic figures and CLAIMS.md.

Importing the package pins the matplotlib backend to Agg and points MPLCONFIGDIR at a private
temporary folder when the caller has not set one, so a render never reads a user's matplotlibrc
(which would change the bytes of every figure).
"""
import os
import tempfile

if "MPLCONFIGDIR" not in os.environ:
    os.environ["MPLCONFIGDIR"] = tempfile.mkdtemp(prefix="carrier-mpl-")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

__all__ = ["io", "bounds", "plots", "claims"]
