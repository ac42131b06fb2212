"""The pipeline: the steps of a cycle and of a season day, written once; the season's tables
and the warehouse. The command line and the Prefect flows run these same steps."""
