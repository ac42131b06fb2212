"""The ledger: append-only records of every cycle and monitor window, one set of Parquet files
per (cycle, contestant), written once."""
