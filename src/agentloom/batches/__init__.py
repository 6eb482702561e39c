"""The Batch API (``/v1/batches``): requests read from an input file, run as a durable job."""
