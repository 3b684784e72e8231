"""``optsched plot INSTANCE SCHEDULE -o gantt.png``: a Gantt chart of a schedule file (one row per GPU, grouped by
server; the makespan, and the optimum or a lower bound, marked); ``--trace FILE`` writes the same schedule as
Chrome-trace JSON for ui.perfetto.dev.

The optimum or bound comes from ``--optimum`` / ``--bound``, else from the schedule file (``optsched solve -o``
writes its status and lower bound), else, for RAR-DDLS, from the certified lower bound of
[`optsched.bounds.lower_bound`][].
"""

from __future__ import annotations

import argparse
import os
import sys

from ._args import non_negative_float, output_file, positive_float


def register(sub) -> None:
    p = sub.add_parser("plot", help="draw a schedule file as a Gantt chart (PNG) or a Chrome trace",
                       description="Draw an offline schedule on its instance: one row per GPU grouped by server, "
                                   "each job a bar on the GPUs it holds, the makespan as a solid line and the "
                                   "optimum (when the schedule's exact model proved it) or a lower bound dashed. "
                                   "--trace writes the schedule as Chrome-trace JSON instead of or besides the "
                                   "picture.",
                       epilog="Example: optsched solve tiny.json -a exact -o s.json && "
                              "optsched plot tiny.json s.json -o gantt.png")
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("schedule", help="schedule JSON file (format optsched/schedule@1)")
    p.add_argument("-o", "--output", type=output_file("-o"), default=None,
                   help="PNG file to write ('-' for standard output)")
    p.add_argument("--trace", type=output_file("--trace"), default=None,
                   help="write the schedule as Chrome-trace JSON here (open in ui.perfetto.dev)")
    p.add_argument("--optimum", type=non_negative_float("--optimum"), default=None,
                   help="mark this optimal makespan (default: the schedule file's, when it says optimal)")
    p.add_argument("--bound", type=non_negative_float("--bound"), default=None,
                   help="mark this lower bound (default: the file's lower_bound, or RAR-DDLS's certified bound)")
    p.add_argument("--title", default=None, help="the chart's title (default: instance, algorithm, jobs, GPUs)")
    p.add_argument("--time-unit", type=positive_float("--time-unit"), default=None,
                   help="seconds per time unit for --trace (default: the instance's, 1 otherwise)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..api import load_instance
    from ..errors import InstanceError
    from ..io import check_output, read_json, schedule_from_dict, writes_to_stdout
    from ..plot import gantt, save_axes, schedule_segments, write_chrome_trace
    from ..registry import problem_of

    if args.output is None and args.trace is None:
        raise InstanceError("give -o FILE.png and/or --trace FILE.json", field="-o")
    if writes_to_stdout(args.output) and writes_to_stdout(args.trace):
        raise InstanceError("-o and --trace both write to standard output", field="--trace")
    for flag, path in (("-o", args.output), ("--trace", args.trace)):
        if path is not None:
            check_output(path, flag, inputs=[args.instance, args.schedule])
    if args.output is not None and args.trace is not None and not writes_to_stdout(args.output) and \
            os.path.realpath(args.output) == os.path.realpath(args.trace):
        raise InstanceError("is the same file as -o", field="--trace")
    inst = load_instance(args.instance)
    data = read_json(args.schedule)
    sched = schedule_from_dict(data)
    optimum, bound = args.optimum, args.bound
    makespan_problem = problem_of(inst).name == "rar-ddls"
    if makespan_problem and isinstance(data, dict):
        if optimum is None and data.get("status") == "optimal" and isinstance(data.get("makespan"), (int, float)):
            optimum = float(data["makespan"])
        if bound is None and isinstance(data.get("lower_bound"), (int, float)) and optimum is None:
            bound = float(data["lower_bound"])
    if makespan_problem and bound is None and optimum is None:
        from ..bounds import lower_bound

        bound = float(lower_bound(inst))  # type: ignore[arg-type]  # a RarInstance: its problem is rar-ddls
    seg = schedule_segments(inst, sched)  # checks the schedule against the instance before anything is written
    out = sys.stderr if writes_to_stdout(args.output) or writes_to_stdout(args.trace) else sys.stdout
    if args.output:
        ax = gantt(inst, sched, optimum=optimum, bound=bound, title=args.title)
        save_axes(ax, args.output)
        if not writes_to_stdout(args.output):
            print(f"Gantt chart written to {args.output} (makespan {seg['end'].max():g}"
                  + (f", optimum {optimum:g}" if optimum is not None else "")
                  + (f", lower bound {bound:g}" if bound is not None else "") + ")", file=out)
    if args.trace:
        unit = args.time_unit or float(getattr(inst, "time_unit_s", 1.0) or 1.0)
        write_chrome_trace(seg, args.trace, instance=inst, time_unit_s=unit, name=f"optsched {sched.algorithm}")
        if not writes_to_stdout(args.trace):
            print(f"Chrome trace written to {args.trace} (open it in ui.perfetto.dev)", file=out)
    return 0
