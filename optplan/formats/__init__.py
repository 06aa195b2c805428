"""Input and output formats: optplan's JSON instances, MiniMalloc CSV, solution CSV."""

from optplan.formats.instance_json import instance_from_dict, instance_to_dict, read_json_instance, write_json_instance
from optplan.formats.minimalloc_csv import read_minimalloc_csv, write_minimalloc_csv
from optplan.formats.solution_csv import read_solution_csv, write_solution_csv
from optplan.formats.loader import load_instance

__all__ = [
    "load_instance",
    "instance_from_dict",
    "instance_to_dict",
    "read_json_instance",
    "write_json_instance",
    "read_minimalloc_csv",
    "write_minimalloc_csv",
    "read_solution_csv",
    "write_solution_csv",
]
