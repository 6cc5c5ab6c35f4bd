"""A tiny package for the sbx compatibility suite (installed with pip, no network)."""
import importlib.resources
import sys

__version__ = "1.0.0"


def greeting():
    return importlib.resources.files(__name__).joinpath("data.txt").read_text().strip()


def main():
    print(f"{greeting()} from {sys.prefix}")
    return 0
