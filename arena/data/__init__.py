"""Market data: providers (one adapter each), bar resampling, validation and the Parquet lake."""
