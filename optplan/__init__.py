"""optplan: solver-backed optimality research toolkit for DNN memory planning."""

from optplan.bounds import lower_bound, max_breadth, positional_maximums
from optplan.errors import InputError, OptplanError, UnknownMethodError
from optplan.formats import load_instance
from optplan.model import Instance, OffsetsSolution, SharedObjectsSolution, UsageRecord
from optplan.problems import Problem, ProblemSpec, get_problem, problems, register_problem
from optplan.profiles import breadths, operator_profiles
from optplan.registry import get_method, methods, register
from optplan.result import Result, SolverOutcome, Status
from optplan.solve import solve
from optplan.validate import Violation, ViolationKind, validate

__version__ = "0.1.0"

__all__ = [
    "Instance", "UsageRecord", "Problem", "ProblemSpec", "problems", "get_problem",
    "register_problem", "SharedObjectsSolution", "OffsetsSolution",
    "Result", "SolverOutcome", "Status", "Violation", "ViolationKind",
    "solve", "validate", "methods", "get_method", "register", "load_instance",
    "lower_bound", "max_breadth", "positional_maximums", "operator_profiles", "breadths",
    "InputError", "OptplanError", "UnknownMethodError", "__version__",
]
