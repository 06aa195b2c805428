"""Network graphs: the data model, lifetime analysis, TFLite-style fusion, re-typing."""

from optplan.graph.lifetimes import VIEW_SETTINGS, lifetimes
from optplan.graph.model import (DTYPE_BYTES, Graph, Op, Tensor, Weight, graph_from_dict,
                                 graph_of_instance, graph_to_dict)
from optplan.graph.fusion import fuse
from optplan.graph.transforms import align_sizes, retype
from optplan.graph.nntrainer_inplace import nntrainer_inplace, nntrainer_inplace_instance

__all__ = ["Graph", "Op", "Tensor", "Weight", "DTYPE_BYTES", "graph_from_dict", "graph_to_dict",
           "graph_of_instance", "lifetimes", "VIEW_SETTINGS", "fuse", "retype", "align_sizes",
           "nntrainer_inplace", "nntrainer_inplace_instance"]
