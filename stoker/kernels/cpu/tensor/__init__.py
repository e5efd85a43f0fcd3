"""Tensor operators: types, shapes, joins, windows, arithmetic, indexing, normalization."""
