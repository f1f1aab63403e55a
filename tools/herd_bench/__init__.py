"""herd's benchmark harness: runs the kernels in bench/ under each scheduler
variant, one process per run in a shuffled order, and prints the tables
(see cli.py). Python standard library, plus matplotlib for the figure when
it is installed."""

__version__ = "0.1.0"
