"""Data the benchmarks read: original text written for them, nothing downloaded."""
