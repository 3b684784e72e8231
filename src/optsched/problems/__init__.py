"""Problem data, one module per problem: immutable, validated once at construction."""

from .rar import RarInstance, RarJob

__all__ = ["RarInstance", "RarJob"]
