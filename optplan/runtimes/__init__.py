"""optplan's plans inside real runtimes: each runtime's own planner against optplan's, measured
in the runtime (the bytes it allocates, the outputs it computes).

* :mod:`optplan.runtimes.executorch` — a memory-planning algorithm for ExecuTorch (extra
  ``executorch``);
* :mod:`optplan.runtimes.tflite_micro` — offline memory plans for TensorFlow Lite Micro (extra
  ``tflm``);
* :mod:`optplan.runtimes.plan` — what both share: solve, validate, refuse an overlapping plan,
  never hand over a plan larger than the runtime's own.

Nothing here imports a runtime until it is used.
"""
