"""Everything that needs PyTorch (the ``torch`` extra, ``torch==2.13.0`` CPU), imported lazily:

* :mod:`optplan.torch.models` — the network zoo: torch modules with random weights
  (``optplan import torch NETWORK``);
* :mod:`optplan.torch.export` — ``torch.export`` programs → our graph model;
* :mod:`optplan.torch.training` — forward + backward graphs of one training step;
* :mod:`optplan.torch.replay` — run a program inside one arena laid out by an offsets plan.

Importing these modules does not import torch; their entry points raise
:class:`~optplan.importers.MissingExtraError` when it is missing.
"""
